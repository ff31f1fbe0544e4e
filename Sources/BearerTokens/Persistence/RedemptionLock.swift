import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock that makes redeeming the account's refresh token a critical section across processes (SPEC §7
/// "Several processes, one account"): two `serve`s, a `token` in a script and a `login` share one token cache file,
/// and an identity provider that rotates refresh tokens accepts each one once.
///
/// An advisory `flock(2)` on a file of its own next to the token cache, `.tokens-<account>.json.redeem-lock` — not
/// the directory's `.lock`, which every write takes for a moment: a redemption holds this one for a whole token
/// request, and ordinary writes (a dropped token, a `login`) must not wait for an identity provider. `flock` ends
/// with the process that holds it, so a holder killed with SIGKILL never blocks the others; and it belongs to the
/// open file, so two tasks of one process exclude each other too (an `fcntl` lock is per process and would not).
///
/// The wait is bounded, and no thread is ever parked in `flock` — not an event loop, not one of the cooperative
/// pool's few threads: the lock is tried without blocking, again and again with growing pauses, until
/// ``maximumWait`` has passed.
public struct RedemptionLock: Sendable {
    /// The lock file's absolute path. The file is never deleted: a process could be holding it.
    public let path: String
    /// Where it lives; created when missing, since the first redemption can come before the first write.
    package let directory: StateDirectory

    /// Longer than one token request may take (``IdentityProviderClient``'s 30 s deadline), so an honest holder is
    /// always waited for; a holder stuck longer (a stopped process) is gone around.
    public static let maximumWait: Duration = .seconds(40)
    /// The first pause between tries; it doubles up to ``longestPause``.
    static let firstPause: Duration = .milliseconds(2)
    static let longestPause: Duration = .milliseconds(50)

    public init(store: TokenStore) {
        self.init(directory: store.directory, fileName: store.fileName)
    }

    /// The lock for the file `fileName` in `directory` (a discovered route's sign-in).
    package init(directory: StateDirectory, fileName: String) {
        self.directory = directory
        path = directory.path + "/." + fileName + ".redeem-lock"
    }

    /// Whether the body of ``withLock(maximumWait:waiting:_:)`` runs holding the lock.
    public enum Outcome: Sendable, Equatable {
        case held
        /// Another process held it for longer than the bound allowed.
        case waitExceeded
        /// The task was cancelled while it waited (a shutdown): the body should not go on to the provider.
        case cancelled
        /// The lock file could not be opened or locked (the reason, for the log).
        case unavailable(String)
    }

    /// Runs `body` holding the lock — or, when it cannot be had within `maximumWait`, without it (the outcome says
    /// which): a redemption without the lock risks one `invalid_grant`, which the caller recovers from by reading
    /// the file again, where refusing would stop every process behind one that hangs. A task cancelled while it
    /// waits stops waiting at once (``Outcome/cancelled``). `waiting` is called once if another process holds the
    /// lock at the first try.
    public func withLock<T, E: Error>(
        maximumWait: Duration = Self.maximumWait, waiting: () -> Void = {},
        _ body: (Outcome) async throws(E) -> T
    ) async throws(E) -> T {
        let (descriptor, outcome) = await acquire(maximumWait: maximumWait, waiting: waiting)
        defer {
            if let descriptor {
                flock(descriptor, LOCK_UN)
                close(descriptor)
            }
        }
        return try await body(outcome)
    }

    private func acquire(maximumWait: Duration, waiting: () -> Void) async -> (Int32?, Outcome) {
        do {
            try directory.prepare()
        } catch {
            return (nil, .unavailable("\(error)"))
        }
        // O_CLOEXEC: a child started while the lock is held (a `command` flow, a browser) must not inherit it.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return (nil, .unavailable(Self.lastError())) }
        let deadline = ContinuousClock.now + maximumWait
        var pause = Self.firstPause
        var announced = false
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let reason = Self.lastError()
                close(descriptor)
                return (nil, .unavailable(reason))
            }
            if !announced {
                announced = true
                waiting()
            }
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                return (nil, .waitExceeded)
            }
            do {
                try await Task.sleep(for: pause)
            } catch {
                close(descriptor)
                return (nil, .cancelled)
            }
            pause = min(pause * 2, Self.longestPause)
        }
        return (descriptor, .held)
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
