import NIOCore

/// Writes ``MessagePart``s to a connection as bytes — responses to the client, requests to an upstream: heads as
/// they come, and bodies as they are, or as chunks (RFC 9112 §7.1) when their head said so. Body bytes are never
/// copied: a chunk goes out as its size line, the body's own buffer and a CRLF.
///
/// A value the connection's last handler owns and calls (``ProxyConnectionHandler``), rather than a handler of its
/// own: a part that crossed the pipeline as a `NIOAny` cost a dynamic cast and a generic-metadata lookup at each
/// end, ~2 µs a request between them (docs/benchmarks.md). Only ByteBuffers go down the pipeline.
package struct MessageFramer {
    /// The body being written goes as chunks.
    private var chunked = false
    /// Written with no bytes, for an end that has none: its promise completes once what came before is written.
    /// These buffers are never written into, so one of each serves every connection; a framer's own would cost each
    /// new one (an HTTP/2 stream's) three allocations.
    private static let empty = ByteBuffer()
    private static let crlf = ByteBuffer(staticString: "\r\n")
    private static let lastChunk = ByteBuffer(staticString: "0\r\n\r\n")

    package init() {}

    /// Writes `part` from `context` (to the handlers before it, then the socket); `promise` completes once all of
    /// it is written.
    package mutating func write(
        _ part: MessagePart, from context: ChannelHandlerContext, promise: EventLoopPromise<Void>?
    ) {
        switch part {
        case .head(let bytes, let chunked):
            self.chunked = chunked
            context.write(NIOAny(bytes), promise: promise)
        case .body(let body):
            // Nothing to send (and a chunk of size zero would be the last one): written only to carry a promise.
            guard body.readableBytes > 0 else { return writeNothing(from: context, promise: promise) }
            guard chunked else { return context.write(NIOAny(body), promise: promise) }
            var size = context.channel.allocator.buffer(capacity: 18)
            Self.writeHexadecimal(body.readableBytes, into: &size)
            size.writeStaticString("\r\n")
            context.write(NIOAny(size), promise: nil)
            context.write(NIOAny(body), promise: nil)
            context.write(NIOAny(Self.crlf), promise: promise)
        case .end(let trailers):
            guard chunked else { return writeNothing(from: context, promise: promise) }
            chunked = false
            guard let trailers, trailers.readableBytes > 0 else {
                return context.write(NIOAny(Self.lastChunk), promise: promise)
            }
            var end = context.channel.allocator.buffer(capacity: trailers.readableBytes + 5)
            end.writeStaticString("0\r\n")
            end.writeImmutableBuffer(trailers)
            end.writeStaticString("\r\n")
            context.write(NIOAny(end), promise: promise)
        }
    }

    /// A part with no bytes to send: an empty write only when a promise waits for it (it completes once what came
    /// before is written); none otherwise — each write costs a pass through the pipeline to the socket's queue.
    private func writeNothing(from context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        if let promise { context.write(NIOAny(Self.empty), promise: promise) }
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
