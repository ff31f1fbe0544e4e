import NIOCore
import Synchronization

/// The observations `FakeUpstream` shares between its connections' event loops and the test: connection counts,
/// recorded requests, open channels and the tasks waiting for counts to be reached. Everything sits behind one
/// `Mutex`; continuations are resumed outside it.
final class FakeUpstreamState: Sendable {
    /// What a waiter waits for.
    enum Condition: Sendable, CustomStringConvertible {
        case accepted(Int)
        case closed(Int)
        case requests(Int)
        case completedRequests(Int)

        func isMet(by data: Observed) -> Bool {
            switch self {
            case .accepted(let n): return data.accepted >= n
            case .closed(let n): return data.closed >= n
            case .requests(let n): return data.requests.count >= n
            case .completedRequests(let n): return data.requests.count(where: \.complete) >= n
            }
        }

        var description: String {
            switch self {
            case .accepted(let n): return "\(n) accepted connection(s)"
            case .closed(let n): return "\(n) closed connection(s)"
            case .requests(let n): return "\(n) request head(s)"
            case .completedRequests(let n): return "\(n) complete request(s)"
            }
        }
    }

    /// The mutable observations.
    struct Observed: Sendable {
        var accepted = 0
        var closed = 0
        var requests: [RecordedRequest] = []
        var openChannels: [Int: any Channel] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        var isShutDown = false

        var summary: String {
            "accepted \(accepted), closed \(closed), requests \(requests.count)"
        }
    }

    /// A task waiting for a condition.
    struct Waiter: Sendable {
        let condition: Condition
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let observed = Mutex(Observed())
    private let timerLoop: any EventLoop

    init(timerLoop: any EventLoop) {
        self.timerLoop = timerLoop
    }

    var snapshot: (accepted: Int, closed: Int, requests: [RecordedRequest]) {
        self.observed.withLock { ($0.accepted, $0.closed, $0.requests) }
    }

    /// Counts a new connection and returns its id (1-based, in accept order).
    func connectionAccepted(_ channel: any Channel) -> Int {
        self.mutate { data in
            data.accepted += 1
            data.openChannels[data.accepted] = channel
            return data.accepted
        }
    }

    func connectionClosed(_ id: Int) {
        self.mutate { data in
            data.closed += 1
            data.openChannels[id] = nil
        }
    }

    /// Records a request head; returns the record's index.
    func requestStarted(_ head: RequestHead, connectionID: Int) -> Int {
        self.mutate { data in
            data.requests.append(
                RecordedRequest(
                    head: head, connectionID: connectionID, bodyLength: 0, bodySHA256: TestPattern.sha256(length: 0),
                    bodyPrefix: [], complete: false))
            return data.requests.count - 1
        }
    }

    /// Settles a record's body fields.
    func requestFinished(index: Int, body: BodyDigest, complete: Bool) {
        let sha = body.sha256
        self.mutate { data in
            data.requests[index].bodyLength = body.length
            data.requests[index].bodySHA256 = sha
            data.requests[index].bodyPrefix = body.prefix
            data.requests[index].complete = complete
        }
    }

    /// Waits until `condition` holds; throws `TestSupportError.timedOut` after `timeout`, `CancellationError` if
    /// the task is cancelled, `TestSupportError.shutDown` if the upstream shuts down first.
    func wait(for condition: Condition, timeout: Duration) async throws {
        let id = self.observed.withLock { data -> Int in
            data.nextWaiterID += 1
            return data.nextWaiterID
        }
        let timer = self.timerLoop.scheduleTask(in: TimeAmount(timeout)) {
            self.fail(id, with: TestSupportError.timedOut("waiting for \(condition)", after: timeout))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = self.observed.withLock { data in
                    if condition.isMet(by: data) { return .success(()) }
                    if data.isShutDown { return .failure(TestSupportError.shutDown) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    data.waiters[id] = Waiter(condition: condition, continuation: continuation)
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

    /// The channels of the connections still open.
    var openChannels: [any Channel] {
        self.observed.withLock { Array($0.openChannels.values) }
    }

    /// Marks the state shut down, fails every waiter and returns the channels still open.
    func shutDown() -> [any Channel] {
        let (waiters, channels) = self.observed.withLock { data in
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
        let found = self.observed.withLock { data -> (Waiter, any Error)? in
            guard let waiter = data.waiters.removeValue(forKey: id) else { return nil }
            if let error = error as? TestSupportError, case .timedOut(let what, let after) = error {
                return (waiter, TestSupportError.timedOut("\(what) (observed: \(data.summary))", after: after))
            }
            return (waiter, error)
        }
        if let (waiter, error) = found {
            waiter.continuation.resume(throwing: error)
        }
    }

    /// Applies `body` under the lock, then resumes the waiters whose condition now holds.
    private func mutate<T: Sendable>(_ body: (inout Observed) -> T) -> T {
        let (result, ready) = self.observed.withLock { data -> (T, [Waiter]) in
            let result = body(&data)
            var ready: [Waiter] = []
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
}
