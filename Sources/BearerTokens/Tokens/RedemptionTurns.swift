import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Synchronization

/// Makes one process's redemptions of its refresh token happen one at a time, first come first served — for a
/// refresh token that is not shared through the token cache file (`--no-persist`, or a `login`'s new sign-in before
/// its write). A provider that rotates refresh tokens accepts each one once, so two scope sets asked for at the same
/// moment must not both redeem the same one. (A shared refresh token has the ``RedemptionLock``, which does this
/// across processes and within one.)
package final class RedemptionTurns: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Runs `body` once no other redemption of this process is running.
    package func inTurn<T, E: Error>(_ body: () async throws(E) -> T) async throws(E) -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
        defer {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else {
                    state.busy = false
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }

    package init() {}
}
