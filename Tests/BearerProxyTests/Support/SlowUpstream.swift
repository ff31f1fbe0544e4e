import Synchronization

/// An upstream behaviour whose responses stay open until the test says so: each request gets an SSE stream that
/// ends with one event when ``finishAll(with:)`` is called. For "requests in flight during shutdown" tests.
final class SlowUpstream: Sendable {
    private let streams = Mutex<[AsyncStream<String>.Continuation]>([])

    /// The behaviour to give `FakeUpstream`.
    var behaviour: @Sendable (RequestHead) -> UpstreamBehaviour {
        { [self] _ in
            let (events, continuation) = AsyncStream.makeStream(of: String.self)
            streams.withLock { $0.append(continuation) }
            return .events(events)
        }
    }

    /// Sends `event` on every open response and ends it.
    func finishAll(with event: String) {
        for continuation in streams.withLock({ $0 }) {
            continuation.yield(event)
            continuation.finish()
        }
    }
}
