import NIOCore
import Synchronization

/// The observations `FakeUpstream` shares between its connections' event loops and the test: connection counts and
/// recorded requests, in a ``WatchedState`` (which also keeps the open channels and the waiting tasks).
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

        var summary: String {
            "accepted \(accepted), closed \(closed), requests \(requests.count)"
        }
    }

    private let observed: WatchedState<Observed>

    init(timerLoop: any EventLoop) {
        self.observed = WatchedState(Observed(), timerLoop: timerLoop, summary: \.summary)
    }

    var snapshot: (accepted: Int, closed: Int, requests: [RecordedRequest]) {
        self.observed.read { ($0.accepted, $0.closed, $0.requests) }
    }

    /// Counts a new connection and returns its id (1-based, in accept order), or nil once shut down (the caller
    /// closes it).
    func connectionAccepted(_ channel: any Channel) -> Int? {
        guard let id = self.observed.connectionOpened(channel) else { return nil }
        self.observed.mutate { $0.accepted += 1 }
        return id
    }

    func connectionClosed(_ id: Int) {
        self.observed.connectionClosed(id)
        self.observed.mutate { $0.closed += 1 }
    }

    /// Records a request head; returns the record's index.
    func requestStarted(_ head: RequestHead, connectionID: Int) -> Int {
        self.observed.mutate { data in
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
        self.observed.mutate { data in
            data.requests[index].bodyLength = body.length
            data.requests[index].bodySHA256 = sha
            data.requests[index].bodyPrefix = body.prefix
            data.requests[index].complete = complete
        }
    }

    /// Waits until `condition` holds; throws `TestSupportError.timedOut` after `timeout`, `CancellationError` if
    /// the task is cancelled, `TestSupportError.shutDown` if the upstream shuts down first.
    func wait(for condition: Condition, timeout: Duration) async throws {
        try await self.observed.wait(for: "\(condition)", timeout: timeout) { condition.isMet(by: $0) }
    }

    /// The channels of the connections still open.
    var openChannels: [any Channel] { self.observed.openChannels }

    /// Marks the state shut down, fails every waiter and returns the channels still open.
    func shutDown() -> [any Channel] {
        self.observed.shutDown()
    }
}
