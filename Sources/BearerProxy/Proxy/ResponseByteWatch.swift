import NIOCore

/// Sits below an upstream connection's HTTP decoder (above TLS) and notes whether any response byte arrived since
/// the current exchange took the connection. A request is replayed only when none did (SPEC §8): a pooled
/// connection the upstream closed while idle. Once a byte has come — an unparseable answer, half a head, a reset
/// mid-response — the upstream may have acted on the request, and a second copy could run it twice.
final class ResponseByteWatch: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Reset by the exchange that takes the connection.
    var sawBytes = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        sawBytes = true
        context.fireChannelRead(data)
    }
}
