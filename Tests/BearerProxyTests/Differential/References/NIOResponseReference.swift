import NIOCore
import NIOEmbedded
import NIOHTTP1

/// NIOHTTP1's response decoder (llhttp) as a reference, configured as the proxy's upstream connections configure it
/// (`Sources/BearerDataPlane/Upstream/HTTP1Connector.swift`: `.forwardBytes`, informational responses
/// forwarded), each response answering a GET, fed the stream's reads one by one. The stream ends with the upstream's
/// close, which ends a body delimited by it (RFC 9112 §6.3 rule 8).
enum NIOResponseReference {
    /// Requests the decoder is told about before the first byte: more than any corpus stream answers.
    static let primedRequests = 32

    static func responses(_ input: DifferentialInput) -> StreamVerdict {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        try! channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .forward)))
        // The decoder frames a response by the request it answers (a HEAD's has no body): it learns them from the
        // heads written through it.
        for _ in 0..<primedRequests {
            try! channel.writeOutbound(
                HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")))
        }
        var collector = Collector()
        for piece in input.pieces {
            var failure: (any Error)?
            do { try channel.writeInbound(ByteBuffer(bytes: piece)) } catch { failure = error }
            collector.drain(channel)
            if let end = collector.stopped { return StreamVerdict(messages: collector.messages, end: end) }
            if let failure {
                return StreamVerdict(messages: collector.messages, end: .error, error: "\(failure)")
            }
        }
        // The upstream closes.
        var failure: (any Error)?
        do { _ = try channel.finish() } catch { failure = error }
        collector.drain(channel)
        if let end = collector.stopped { return StreamVerdict(messages: collector.messages, end: end) }
        if collector.current != nil || failure != nil {
            return StreamVerdict(messages: collector.messages, end: .incomplete)
        }
        return StreamVerdict(messages: collector.messages, end: .clean, leftover: 0)
    }

    private struct Collector {
        var messages: [FramedMessage] = []
        var current: FramedMessage?
        var keepAlive = true
        var stopped: StreamVerdict.End?

        mutating func drain(_ channel: EmbeddedChannel) {
            while stopped == nil, let part = try? channel.readInbound(as: HTTPClientResponsePart.self) {
                switch part {
                case .head(let head):
                    let message = FramedMessage(
                        status: Int(head.status.code), version: "HTTP/\(head.version.major).\(head.version.minor)",
                        fields: NIOStreamReference.fields(head.headers), body: [], trailers: [])
                    // An informational response is a message of its own, with no body and no end (RFC 9110 §15.2).
                    if (100..<200).contains(head.status.code) && head.status.code != 101 {
                        messages.append(message)
                    } else {
                        current = message
                        keepAlive = head.isKeepAlive
                    }
                case .body(let buffer):
                    current?.body += buffer.readableBytesView
                case .end(let trailers):
                    guard var message = current else { continue }
                    message.trailers = trailers.map(NIOStreamReference.fields) ?? []
                    messages.append(message)
                    current = nil
                    if !keepAlive { stopped = .close }
                }
            }
        }
    }
}
