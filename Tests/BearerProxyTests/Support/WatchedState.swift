import NIOCore
import Synchronization

/// The lock-guarded state of a fake server that tests wait on — shared by `FakeUpstream`,
/// `FakeIdentityProvider` and `FakeFirebase`: one `Mutex` around the server's data, its open connections and the
/// tasks waiting for a condition on the data. A waiter's condition is checked under the same lock as every change,
/// so none is missed; continuations are resumed outside it.
final class WatchedState<Data: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let isMet: @Sendable (Data) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Box: Sendable {
        var data: Data
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        var channels: [Int: any Channel] = [:]
        var nextChannelID = 0
        var isShutDown = false
    }

    private let box: Mutex<Box>
    private let timerLoop: any EventLoop
    /// What a timed-out wait reports as observed (counts, never secrets).
    private let summary: @Sendable (Data) -> String

    init(_ data: Data, timerLoop: any EventLoop, summary: @escaping @Sendable (Data) -> String) {
        self.box = Mutex(Box(data: data))
        self.timerLoop = timerLoop
        self.summary = summary
    }

    /// Reads under the lock.
    func read<T: Sendable>(_ body: (Data) -> T) -> T {
        self.box.withLock { body($0.data) }
    }

    /// Applies `body` under the lock, then resumes the waiters whose condition now holds.
    @discardableResult
    func mutate<T: Sendable>(_ body: (inout Data) -> T) -> T {
        let (result, ready) = self.box.withLock { box -> (T, [Waiter]) in
            let result = body(&box.data)
            var ready: [Waiter] = []
            for (id, waiter) in box.waiters where waiter.isMet(box.data) {
                ready.append(waiter)
                box.waiters[id] = nil
            }
            return (result, ready)
        }
        for waiter in ready {
            waiter.continuation.resume()
        }
        return result
    }

    // MARK: - Connections

    /// Registers an accepted connection and returns its id (1, 2, … in accept order), or nil once shut down (the
    /// caller closes it).
    func connectionOpened(_ channel: any Channel) -> Int? {
        self.box.withLock { box -> Int? in
            if box.isShutDown { return nil }
            box.nextChannelID += 1
            box.channels[box.nextChannelID] = channel
            return box.nextChannelID
        }
    }

    func connectionClosed(_ id: Int) {
        _ = self.box.withLock { $0.channels.removeValue(forKey: id) }
    }

    /// The channels of the connections still open.
    var openChannels: [any Channel] {
        self.box.withLock { Array($0.channels.values) }
    }

    // MARK: - Waiting and shutdown

    /// Waits until `isMet` holds for the data; throws `TestSupportError.timedOut` (naming `what` and the summary)
    /// after `timeout`, `CancellationError` if the task is cancelled, `TestSupportError.shutDown` if the server
    /// shuts down first.
    func wait(
        for what: String, timeout: Duration, until isMet: @escaping @Sendable (Data) -> Bool
    ) async throws {
        let id = self.box.withLock { box -> Int in
            box.nextWaiterID += 1
            return box.nextWaiterID
        }
        let timer = self.timerLoop.scheduleTask(in: TimeAmount(timeout)) {
            self.fail(id, with: TestSupportError.timedOut("waiting for \(what)", after: timeout))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = self.box.withLock { box in
                    if isMet(box.data) { return .success(()) }
                    if box.isShutDown { return .failure(TestSupportError.shutDown) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    box.waiters[id] = Waiter(isMet: isMet, continuation: continuation)
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

    /// Marks the state shut down (applying `finally` to the data under the same lock), fails every waiter and
    /// returns the channels still open.
    func shutDown(_ finally: (inout Data) -> Void = { _ in }) -> [any Channel] {
        let (waiters, channels) = self.box.withLock { box in
            box.isShutDown = true
            finally(&box.data)
            let waiters = Array(box.waiters.values)
            box.waiters = [:]
            return (waiters, Array(box.channels.values))
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: TestSupportError.shutDown)
        }
        return channels
    }

    private func fail(_ id: Int, with error: any Error) {
        let found = self.box.withLock { box -> (Waiter, any Error)? in
            guard let waiter = box.waiters.removeValue(forKey: id) else { return nil }
            if let error = error as? TestSupportError, case .timedOut(let what, let after) = error {
                return (waiter, TestSupportError.timedOut("\(what) (observed: \(summary(box.data)))", after: after))
            }
            return (waiter, error)
        }
        if let (waiter, error) = found {
            waiter.continuation.resume(throwing: error)
        }
    }
}
