import NIOCore

/// Writes ``MessagePart``s to a connection — responses to the client, requests to an upstream: heads as they come,
/// and bodies as they are, or as chunks (RFC 9112 §7.1) when their head said so. Body bytes are never copied: a
/// chunk goes out as its size line, the body's own buffer and a CRLF.
package final class MessageEncoder<Part: MessagePartConvertible>: ChannelOutboundHandler, RemovableChannelHandler {
    package typealias OutboundIn = Part
    package typealias OutboundOut = ByteBuffer

    /// The body being written goes as chunks.
    private var chunked = false
    /// Written with no bytes, for an end that has none: its promise completes once what came before is written.
    private let empty: ByteBuffer
    private let crlf: ByteBuffer
    private let lastChunk: ByteBuffer

    package init() {
        empty = ByteBuffer()
        crlf = ByteBuffer(staticString: "\r\n")
        lastChunk = ByteBuffer(staticString: "0\r\n\r\n")
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data).messagePart {
        case .head(let bytes, let chunked):
            self.chunked = chunked
            context.write(wrapOutboundOut(bytes), promise: promise)
        case .body(let body):
            guard chunked else { return context.write(wrapOutboundOut(body), promise: promise) }
            // A chunk of size zero is the last one: an empty part is not written at all.
            guard body.readableBytes > 0 else {
                return context.write(wrapOutboundOut(empty), promise: promise)
            }
            var size = context.channel.allocator.buffer(capacity: 18)
            Self.writeHexadecimal(body.readableBytes, into: &size)
            size.writeStaticString("\r\n")
            context.write(wrapOutboundOut(size), promise: nil)
            context.write(wrapOutboundOut(body), promise: nil)
            context.write(wrapOutboundOut(crlf), promise: promise)
        case .end(let trailers):
            guard chunked else { return context.write(wrapOutboundOut(empty), promise: promise) }
            chunked = false
            guard let trailers, trailers.readableBytes > 0 else {
                return context.write(wrapOutboundOut(lastChunk), promise: promise)
            }
            var end = context.channel.allocator.buffer(capacity: trailers.readableBytes + 5)
            end.writeStaticString("0\r\n")
            end.writeImmutableBuffer(trailers)
            end.writeStaticString("\r\n")
            context.write(wrapOutboundOut(end), promise: promise)
        }
    }

    /// `chunk-size = 1*HEXDIG` (RFC 9112 §7.1), without leading zeros.
    private static func writeHexadecimal(_ value: Int, into buffer: inout ByteBuffer) {
        var shift = (Int.bitWidth - value.leadingZeroBitCount + 3) / 4 * 4
        if shift == 0 { shift = 4 }
        while shift > 0 {
            shift -= 4
            let digit = UInt8((value >> shift) & 0xF)
            buffer.writeInteger(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }
}
