import NIOCore
import NIOTLS

/// Waits, on a new `https` upstream connection, for the TLS handshake and the protocol ALPN agreed on (RFC 7301 §3.2),
/// then leaves the pipeline: `negotiated` succeeds with the protocol the server picked (nil when it picked none), or
/// fails with the handshake's error or the close that ended it first.
final class UpstreamProtocolNegotiation: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let negotiated: EventLoopPromise<String?>
    private var done = false

    init(negotiated: EventLoopPromise<String?>) {
        self.negotiated = negotiated
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let tls = event as? TLSUserEvent, case .handshakeCompleted(let chosen) = tls else {
            return context.fireUserInboundEventTriggered(event)
        }
        finish(.success(chosen))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.ioOnClosedChannel))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.ioOnClosedChannel))
    }

    private func finish(_ result: Result<String?, any Error>) {
        guard !done else { return }
        done = true
        negotiated.completeWith(result)
    }
}
