import Synchronization

/// How long the tests wait for anything before they fail. Generous on purpose: a limit exists so that a broken proxy
/// fails its test and the suite goes on (a reviewer who broke the token cache's single flight saw the run hang until
/// CI's 90-minute limit), never to time a correct one — no assertion is about how long something took.
enum TestLimits {
    /// One awaited event: an answer, a token, a sign-in, a group of concurrent callers.
    static let wait: Duration = .seconds(60)
    /// A child process (`bearer-proxy`, Python) from its start to its exit, body included.
    static let child: Duration = .seconds(120)
}

/// Runs `body` and returns what it returns, or throws `TestSupportError.timedOut` naming `what` once `duration` has
/// passed — whether or not `body` responds to cancellation. Cancelling the caller cancels `body` too.
///
/// The two racers are unstructured tasks on purpose: a task group waits for all its children before it returns, so
/// a body stuck on a continuation that nobody resumes (the token cache's waiters, a lock, a gate) would keep the
/// group — and the test — waiting forever, which is the hang this exists to end. The loser is cancelled and left to
/// finish on its own; after a time-out that is a leak only in a run that has already failed.
func withTimeout<T: Sendable>(
    _ duration: Duration = TestLimits.wait, waitingFor what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = FirstOutcome<T>()
    let work = Task {
        do {
            outcome.settle(.success(try await body()))
        } catch {
            outcome.settle(.failure(error))
        }
    }
    let timer = Task {
        guard (try? await Task.sleep(for: duration)) != nil else { return }
        outcome.settle(.failure(TestSupportError.timedOut("waiting for \(what)", after: duration)))
    }
    defer {
        work.cancel()
        timer.cancel()
    }
    return try await withTaskCancellationHandler {
        try await outcome.value
    } onCancel: {
        outcome.settle(.failure(CancellationError()))
    }
}

/// The first of several results to arrive; the later ones are dropped. One task awaits it.
private final class FirstOutcome<T: Sendable>: Sendable {
    private enum State {
        case pending
        case awaited(CheckedContinuation<T, any Error>)
        case settled(Result<T, any Error>)
        case delivered
    }

    private let state = Mutex(State.pending)

    func settle(_ result: Result<T, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<T, any Error>? in
            switch state {
            case .pending:
                state = .settled(result)
                return nil
            case .awaited(let continuation):
                state = .delivered
                return continuation
            case .settled, .delivered:
                return nil
            }
        }
        waiting?.resume(with: result)
    }

    var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<T, any Error>? in
                    guard case .settled(let result) = state else {
                        state = .awaited(continuation)
                        return nil
                    }
                    state = .delivered
                    return result
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}

/// Kills a child process that is still running after a limit, so a child that never exits (or a test body that
/// never lets it) fails the test instead of hanging the suite. The run that starts the child hands over its kill
/// switch with ``arm(_:)``; ``run(limit:what:_:)`` throws `TestSupportError.timedOut` afterwards if it fired.
final class ChildWatchdog: Sendable {
    private struct State {
        var kill: (@Sendable () -> Void)?
        var fired = false
    }

    private let state = Mutex(State())

    /// Hands over the way to kill the child (SIGKILL). Killing one that has exited is harmless: swift-subprocess
    /// signals through a process descriptor, never a reusable process id.
    func arm(_ kill: @escaping @Sendable () -> Void) {
        state.withLock { $0.kill = kill }
    }

    /// Runs `run` (which starts the child and arms the watchdog) and kills the child if it has not ended `limit`
    /// after the start. `what` names the child in the error.
    static func run<T>(
        limit: Duration = TestLimits.child, what: String, _ run: (ChildWatchdog) async throws -> T
    ) async throws -> T {
        let watchdog = ChildWatchdog()
        let timedOut = TestSupportError.timedOut("\(what) to exit (killed)", after: limit)
        let result: T
        do {
            result = try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
                group.addTask {
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    let kill = watchdog.state.withLock { state in
                        state.fired = true
                        return state.kill
                    }
                    kill?()
                }
                defer { group.cancelAll() }
                return try await run(watchdog)
            }
        } catch {
            // Whatever the killed child made the run throw, the cause was the limit.
            throw watchdog.fired ? timedOut : error
        }
        if watchdog.fired { throw timedOut }
        return result
    }

    private var fired: Bool { state.withLock { $0.fired } }
}

/// Polls `condition`, yielding between checks, until it holds; throws `TestSupportError.timedOut` naming `what` after
/// `timeout`. For conditions no one signals (a counter of a fake); prefer a helper's own `wait…` where there is one.
func waitUntil(
    _ what: String, timeout: Duration = TestLimits.wait, _ condition: @escaping @Sendable () -> Bool
) async throws {
    try await withTimeout(timeout, waitingFor: what) {
        while !condition() {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}
