import NIOCore

/// Backpressure without locks (data-plane pitfall 7): the last handler of a channel holds back `read()` while the
/// other side of the proxy is not ready — not yet connected, or not writable — and lets one through when it is.
struct ReadGate {
    private(set) var paused: Bool
    private var readPending = false

    init(paused: Bool) {
        self.paused = paused
    }

    /// From the handler's `read(context:)`.
    mutating func read(_ context: ChannelHandlerContext) {
        if paused {
            readPending = true
        } else {
            context.read()
        }
    }

    mutating func set(paused: Bool, _ context: ChannelHandlerContext) {
        self.paused = paused
        if !paused, readPending {
            readPending = false
            context.read()
        }
    }
}
