import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A discovered route's refreshed sign-in that could not be written (disk full, a read-only state directory): the
/// authorization server has already retired the refresh token the file holds, so the new one lives here, is the one
/// this process uses, and is written again with a back-off until it lands — as the account's unsaved rotation is.
///
/// While it is held, this process also holds a shared `flock` on the sign-in's `.….unsaved-lock` file (created with
/// the sign-in's redemption lock, so that it exists before a disk fills): another process that finds it held does not
/// redeem the retired refresh token the file still shows — which would get `invalid_grant` and sign the route out —
/// but answers `503` until the write lands. The kernel lets the lock go when this process ends, however it ends.
package final class UnsavedDiscoveredSignIn: Sendable {
    /// What is held, while something is.
    package struct Pending: Sendable {
        package var key: DiscoveredSignInKey
        /// The sign-in as memory has it: the newest refresh token and the access token that came with it.
        package var record: PersistedDiscoveredSignIn
        /// The refresh token the file held when it was read, which the write replaces only if it is still there (a
        /// `login` or `logout` since is newer, and stands).
        package var fileHeld: String?
        /// Why the last write failed (the path and the system's reason, never a token).
        package var lastError: String
        /// Writes that failed, the first included.
        package var failures: Int
        /// When the next write may be tried.
        var nextAttempt: ContinuousClock.Instant
        /// The descriptor holding the shared lock, if it could be taken.
        fileprivate var hold: Int32?
    }

    private let pending = Mutex<Pending?>(nil)
    /// Told when memory starts (true) or stops (false) holding a sign-in the file lacks: `/-/metrics` counts them.
    private let heldChanged: @Sendable (Bool) -> Void

    package init(heldChanged: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.heldChanged = heldChanged
    }

    /// What is held now.
    package var current: Pending? { pending.withLock { $0 } }

    /// Whether memory holds an unsaved sign-in under `key`.
    func holds(_ key: DiscoveredSignInKey) -> Bool { pending.withLock { $0?.key == key } }

    /// The sign-in memory holds under `key` when it is newer than `file` — the file still holds the refresh token
    /// memory's descends from; otherwise (another key, another refresh token in the file, no file: a `login` or
    /// `logout` since) what is held is dropped, and nil.
    func newer(than file: PersistedDiscoveredSignIn?, key: DiscoveredSignInKey) -> PersistedDiscoveredSignIn? {
        let (newer, dropped) = pending.withLock { pending -> (PersistedDiscoveredSignIn?, Int32??) in
            guard let held = pending else { return (nil, nil) }
            if held.key == key, let file, file.refreshToken == held.fileHeld { return (held.record, nil) }
            pending = nil
            return (nil, .some(held.hold))
        }
        if case .some(let descriptor) = dropped { release(descriptor) }
        return newer
    }

    /// Keeps `record` after its write failed with `error`; returns whether it was the first failure.
    @discardableResult
    func keep(
        _ record: PersistedDiscoveredSignIn, key: DiscoveredSignInKey, fileHeld: String?, error: String,
        holdAt lockPath: String
    ) -> Bool {
        let now = ContinuousClock.now
        let (first, stale, wasEmpty) = pending.withLock { pending -> (Bool, Int32?, Bool) in
            if var held = pending, held.key == key {
                held.record = record
                held.failures += 1
                held.lastError = error
                pending = held
                return (false, nil, false)
            }
            let (stale, wasEmpty) = (pending?.hold, pending == nil)
            pending = Pending(
                key: key, record: record, fileHeld: fileHeld, lastError: error, failures: 1,
                nextAttempt: now + Self.retryDelay(afterFailures: 1), hold: nil)
            return (true, stale, wasEmpty)
        }
        if let stale { Self.release(stale) }
        if wasEmpty { heldChanged(true) }
        if first, let descriptor = Self.share(lockPath) {
            let unused = pending.withLock { pending -> Int32? in
                guard pending?.key == key, pending?.hold == nil else { return descriptor }
                pending?.hold = descriptor
                return nil
            }
            if let unused { Self.release(unused) }
        }
        return first
    }

    /// The held sign-in when its next write is due at `now` (or at once with `force`).
    func due(at now: ContinuousClock.Instant, force: Bool = false) -> Pending? {
        pending.withLock { pending in
            guard let held = pending, force || held.nextAttempt <= now else { return nil }
            return held
        }
    }

    /// The write of what is held failed again with `error`: the next waits longer (1 s, 2 s, … 30 s).
    func failedAgain(_ error: String, at now: ContinuousClock.Instant) {
        pending.withLock { pending in
            guard var held = pending else { return }
            held.failures += 1
            held.lastError = error
            held.nextAttempt = now + Self.retryDelay(afterFailures: held.failures)
            pending = held
        }
    }

    /// Forgets what is held under `key` — written, refused, or replaced in the file by a newer sign-in.
    func resolve(_ key: DiscoveredSignInKey) {
        let released = pending.withLock { pending -> Int32?? in
            guard let held = pending, held.key == key else { return nil }
            pending = nil
            return .some(held.hold)
        }
        if case .some(let descriptor) = released { release(descriptor) }
    }

    /// Forgets whatever is held (the route has no sign-in any more).
    func resolveAll() {
        let released = pending.withLock { pending -> Int32?? in
            guard let held = pending else { return nil }
            pending = nil
            return .some(held.hold)
        }
        if case .some(let descriptor) = released { release(descriptor) }
    }

    /// Forgets what is held if it is still `record` (a retry that wrote it; a newer one kept meanwhile stays).
    func resolve(_ record: PersistedDiscoveredSignIn) {
        let released = pending.withLock { pending -> Int32?? in
            guard let held = pending, held.record == record else { return nil }
            pending = nil
            return .some(held.hold)
        }
        if case .some(let descriptor) = released { release(descriptor) }
    }

    /// The wait after `failures` failed writes: as the account's (``UnsavedChanges/retryDelay(afterFailures:)``).
    static func retryDelay(afterFailures failures: Int) -> Duration {
        UnsavedChanges.retryDelay(afterFailures: failures)
    }

    /// A descriptor holding a shared lock on `path`, or nil when the file cannot be opened or locked.
    private static func share(_ path: String) -> Int32? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Memory has stopped holding a sign-in: its shared lock (if it took one) goes, and the count goes down.
    private func release(_ descriptor: Int32?) {
        if let descriptor { Self.release(descriptor) }
        heldChanged(false)
    }

    private static func release(_ descriptor: Int32) {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
