import NIOCore

/// The flushes this connection leaves to the end of its loop's batch of events (``EventBatch``): the client's
/// response, and the request it sends upstream.
extension ProxyConnectionHandler {
    /// Flushes the client connection when the loop's batch of events ends.
    func flushClientAtBatchEnd() {
        clientFlushBatched = true
        joinFlushBatch()
    }

    /// Flushes `upstream` when the loop's batch of events ends.
    func flushUpstreamAtBatchEnd(_ upstream: any UpstreamConnection) {
        upstreamFlushBatched = upstream
        joinFlushBatch()
    }

    private func joinFlushBatch() {
        guard !inFlushBatch else { return }
        inFlushBatch = true
        loop.batch.flushAtEnd(self)
    }

    /// The batch has ended (``EventBatch``): what was asked for is flushed — the client's side unless its
    /// connection has gone meanwhile.
    func flushBatched() {
        inFlushBatch = false
        if let upstream = upstreamFlushBatched.take() { upstream.flush() }
        if clientFlushBatched {
            clientFlushBatched = false
            if !removed { context.flush() }
        }
    }

    /// Closes the client connection (`mode`), sending first what it wrote and left for the batch's end: a close
    /// drops whatever was written and not flushed.
    func closeClient(mode: CloseMode = .all, promise: EventLoopPromise<Void>? = nil) {
        close(context: context, mode: mode, promise: promise)
    }

    /// A close from elsewhere (the server's, a handler's before this one) sends first what was left for the batch's
    /// end, as this handler's own closes do.
    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if clientFlushBatched {
            clientFlushBatched = false
            context.flush()
        }
        context.close(mode: mode, promise: promise)
    }
}
