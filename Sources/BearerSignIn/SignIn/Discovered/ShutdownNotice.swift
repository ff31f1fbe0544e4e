import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Synchronization

/// Tells the token requests that wait on something outside this process — a `login ROUTE` in progress on this
/// machine, for up to ``RedemptionLock/maximumWait`` — that the proxy is shutting down: they stop waiting and fail
/// at once, so the request behind them is answered and the drain does not wait for a sign-in that may never come. Given
/// once; a wait that starts after it returns at once.
package final class ShutdownNotice: Sendable {
    private struct State {
        var given = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether the notice has been given.
    var isGiven: Bool { state.withLock { $0.given } }

    /// Gives the notice: every wait returns.
    package func give() {
        let waiters = state.withLock { state in
            state.given = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when the notice is given — at once if it has been — or when the task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    guard !state.given, !Task.isCancelled else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
