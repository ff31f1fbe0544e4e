import NIOCore
import NIOHTTP2

/// A stream's request frames held while its exchange does not want them: the client gets back window only for what is
/// delivered (``HTTP2InboundWindow``, RFC 9113 §5.2), so what waits here is bounded by the stream's window.
///
/// A request is a HEADERS frame, DATA, and perhaps a trailing HEADERS frame (RFC 9113 §8.1), so that is all this
/// holds: its DATA merged into one buffer, the bytes copied. Held frame by frame, a client's one-byte DATA frames would
/// each keep a frame, and the read buffer under its byte, alive: a window's worth of them, thousands of read
/// buffers a stream.
struct HTTP2HeldFrames {
    private var head: HTTP2Frame.FramePayload.Headers?
    private var body: ByteBuffer?
    private var bodyEnds = false
    /// The flow-controlled bytes the held DATA stands for, padding included (RFC 9113 §6.1).
    private var bodyFlowControlled = 0
    private var trailers: HTTP2Frame.FramePayload.Headers?

    var isEmpty: Bool { head == nil && body == nil && trailers == nil }

    /// The DATA bytes held.
    var bytes: Int { body?.readableBytes ?? 0 }

    /// The buffer the held DATA takes: at most about twice ``bytes``, however many frames brought them.
    var capacity: Int { body?.capacity ?? 0 }

    /// Holds a request's HEADERS frame (its head when `isHead`, else its trailers) or DATA frame that stands for
    /// `flowControlled` bytes of the window.
    mutating func hold(_ payload: HTTP2Frame.FramePayload, flowControlled: Int, isHead: Bool) {
        switch payload {
        case .headers(let headers):
            if isHead, head == nil, body == nil { head = headers } else { trailers = headers }
        case .data(let data):
            guard case .byteBuffer(var bytes) = data.data else { return }
            bodyFlowControlled += flowControlled
            bodyEnds = bodyEnds || data.endStream
            if body == nil {
                // Copied, not sliced: the first frame's bytes would keep its read buffer alive.
                body = ByteBufferAllocator().buffer(capacity: bytes.readableBytes)
            }
            body!.writeBuffer(&bytes)
        default:
            break
        }
    }

    /// What was held, in the order it came, each frame with the flow-controlled bytes it stands for; nothing is held
    /// after.
    mutating func take() -> [(payload: HTTP2Frame.FramePayload, flowControlled: Int)] {
        var frames: [(payload: HTTP2Frame.FramePayload, flowControlled: Int)] = []
        if let head = head.take() { frames.append((.headers(head), 0)) }
        if let body = body.take() {
            frames.append((.data(.init(data: .byteBuffer(body), endStream: bodyEnds)), bodyFlowControlled))
        }
        if let trailers = trailers.take() { frames.append((.headers(trailers), 0)) }
        bodyEnds = false
        bodyFlowControlled = 0
        return frames
    }
}
