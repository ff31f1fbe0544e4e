import NIOCore

/// Tells HTTP/2 with prior knowledge from HTTP/1.1 on an accepted connection by its first bytes (RFC 9113 §3.3,
/// §3.4): a client that knows the proxy speaks HTTP/2 opens with the 24-byte connection preface, which no HTTP/1.1
/// request the proxy serves begins with (its version is `HTTP/2.0`). It stands in front of the connection's
/// ``ProxyConnectionHandler`` — whose timers already run, so a client that sends part of the preface and stops is
/// closed as an idle one — and leaves the pipeline at the first bytes that decide: for HTTP/1.1 it hands them on,
/// for HTTP/2 it puts the HTTP/2 connection (``HTTP2ClientConnection``) in the handler's place first.
///
/// `Upgrade: h2c` is never answered (RFC 9113 §3.1 deprecates it): the HTTP/1.1 side strips that token.
final class HTTP2PrefaceDetector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The client connection preface (RFC 9113 §3.4).
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    enum Verdict: Equatable {
        case http1
        case http2
        /// The bytes so far begin the preface: the next ones decide.
        case undecided
    }

    private let http1: ProxyConnectionHandler
    private let http2: HTTP2ClientConnection
    /// The bytes read before the protocol was decided; handed on as they came.
    private var held: ByteBuffer?

    init(http1: ProxyConnectionHandler, http2: HTTP2ClientConnection) {
        self.http1 = http1
        self.http2 = http2
    }

    /// Which protocol `bytes`, a connection's first, open.
    static func verdict(_ bytes: ByteBuffer) -> Verdict {
        let count = min(bytes.readableBytes, preface.count)
        let matches = bytes.withUnsafeReadableBytes { buffer in
            (0..<count).allSatisfy { buffer[$0] == preface[$0] }
        }
        guard matches else { return .http1 }
        return count == preface.count ? .http2 : .undecided
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var first = held.take() {
            first.writeBuffer(&bytes)
            bytes = first
        }
        held = bytes
        switch Self.verdict(bytes) {
        case .undecided:
            return
        case .http1:
            break
        case .http2:
            do {
                let pipeline = context.pipeline.syncOperations
                pipeline.removeHandler(http1, promise: nil)
                try http2.configure(context.channel, after: self)
            } catch {
                held = nil
                return context.close(promise: nil)
            }
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// Leaves with the bytes held: the handler that decides next reads them first.
    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        if let bytes = held.take() {
            context.fireChannelRead(wrapInboundOut(bytes))
            context.fireChannelReadComplete()
        }
        context.leavePipeline(removalToken: removalToken)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A connection closed in the middle of a preface: the HTTP/1.1 side reads (and refuses) what came.
        if let bytes = held.take() { context.fireChannelRead(wrapInboundOut(bytes)) }
        context.fireChannelInactive()
    }
}
