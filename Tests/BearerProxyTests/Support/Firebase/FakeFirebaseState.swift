import Foundation
import NIOCore
import Synchronization

/// The shared, lock-guarded side of `FakeFirebase`: knobs, accounts, sign-in sessions, observations, open
/// connections and waiting tasks. Everything sits in one `FakeFirebaseData` behind one `Mutex`; continuations are
/// resumed outside it.
final class FakeFirebaseState: Sendable {
    /// What a waiter waits for.
    enum Condition: Sendable, CustomStringConvertible {
        /// At least this many requests to the endpoint have been recorded.
        case requests(FakeFirebase.Endpoint, Int)

        func isMet(by data: FakeFirebaseData) -> Bool {
            switch self {
            case .requests(let endpoint, let n): return data.requests.count(where: { $0.endpoint == endpoint }) >= n
            }
        }

        var description: String {
            switch self {
            case .requests(let endpoint, let n): return "\(n) \(endpoint) request(s)"
            }
        }
    }

    private let data: Mutex<FakeFirebaseData>
    private let timerLoop: any EventLoop
    /// The endpoints' logic (used under the lock).
    let operations: FakeFirebaseOperations

    init(configuration: FakeFirebase.Configuration, timerLoop: any EventLoop) {
        self.data = Mutex(FakeFirebaseData(configuration: configuration))
        self.timerLoop = timerLoop
        self.operations = FakeFirebaseOperations(configuration: configuration)
    }

    /// Reads under the lock.
    func read<T: Sendable>(_ body: (FakeFirebaseData) -> T) -> T {
        self.data.withLock { body($0) }
    }

    /// Applies `body` under the lock, then resumes the waiters whose condition now holds.
    @discardableResult
    func mutate<T: Sendable>(_ body: (inout FakeFirebaseData) -> T) -> T {
        let (result, ready) = self.data.withLock { data -> (T, [FakeFirebaseData.Waiter]) in
            let result = body(&data)
            var ready: [FakeFirebaseData.Waiter] = []
            for (id, waiter) in data.waiters where waiter.condition.isMet(by: data) {
                ready.append(waiter)
                data.waiters[id] = nil
            }
            return (result, ready)
        }
        for waiter in ready {
            waiter.continuation.resume()
        }
        return result
    }

    // MARK: - Connections

    /// Registers an accepted connection; returns its id, or nil once shut down (the caller closes it).
    func connectionOpened(_ channel: any Channel) -> Int? {
        self.data.withLock { data -> Int? in
            if data.isShutDown { return nil }
            data.nextConnectionID += 1
            data.openChannels[data.nextConnectionID] = channel
            return data.nextConnectionID
        }
    }

    func connectionClosed(_ id: Int) {
        _ = self.data.withLock { $0.openChannels.removeValue(forKey: id) }
    }

    // MARK: - Waiting and shutdown

    /// Waits until `condition` holds; throws `TestSupportError.timedOut` after `timeout`, `CancellationError` if
    /// the task is cancelled, `TestSupportError.shutDown` if the fake shuts down first.
    func wait(for condition: Condition, timeout: Duration) async throws {
        let id = self.data.withLock { data -> Int in
            data.nextWaiterID += 1
            return data.nextWaiterID
        }
        let timer = self.timerLoop.scheduleTask(in: TimeAmount(timeout)) {
            self.fail(id, with: TestSupportError.timedOut("waiting for \(condition)", after: timeout))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = self.data.withLock { data in
                    if condition.isMet(by: data) { return .success(()) }
                    if data.isShutDown { return .failure(TestSupportError.shutDown) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    data.waiters[id] = FakeFirebaseData.Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                }
            }
        } onCancel: {
            self.fail(id, with: CancellationError())
        }
    }

    /// Marks the state shut down, fails every waiter and returns the open channels.
    func shutDown() -> [any Channel] {
        let (waiters, channels) = self.data.withLock { data in
            data.isShutDown = true
            let waiters = Array(data.waiters.values)
            data.waiters = [:]
            return (waiters, Array(data.openChannels.values))
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: TestSupportError.shutDown)
        }
        return channels
    }

    private func fail(_ id: Int, with error: any Error) {
        let found = self.data.withLock { data -> (FakeFirebaseData.Waiter, any Error)? in
            guard let waiter = data.waiters.removeValue(forKey: id) else { return nil }
            if let error = error as? TestSupportError, case .timedOut(let what, let after) = error {
                let counts = FakeFirebase.Endpoint.allCases.map { endpoint in
                    "\(endpoint) \(data.requests.count(where: { $0.endpoint == endpoint }))"
                }
                let observed = counts.joined(separator: ", ")
                return (waiter, TestSupportError.timedOut("\(what) (observed: \(observed))", after: after))
            }
            return (waiter, error)
        }
        if let (waiter, error) = found {
            waiter.continuation.resume(throwing: error)
        }
    }
}
