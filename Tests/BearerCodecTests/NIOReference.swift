import NIOCore
import NIOEmbedded
import NIOHTTP1

/// NIOHTTP1's decoders as the reference: the product's parser, in an `EmbeddedChannel`, fed the same pieces.
enum NIOReference {
    static func request(_ pieces: [[UInt8]]) -> Outcome {
        let channel = EmbeddedChannel()
        try! channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        var collector = Collector()
        for piece in pieces {
            var failure: Error?
            do { try channel.writeInbound(ByteBuffer(bytes: piece)) } catch { failure = error }
            while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
                switch part {
                case .head(let head):
                    collector.heads.append(
                        DecodedMessage.Head(
                            // NIOHTTP1 names M-SEARCH `.MSEARCH`, whose rawValue drops the dash: llhttp read the
                            // token, so the token is what NIO's verdict says.
                            start: [head.method == .MSEARCH ? "M-SEARCH" : head.method.rawValue, head.uri],
                            minorVersion: head.version.minor,
                            fields: fields(head.headers)))
                case .body(let buffer): collector.body += buffer.readableBytesView
                case .end(let trailers): collector.end(trailers)
                }
                if collector.complete { break }
            }
            if collector.complete { break }
            if let failure { return .refused("NIO: \(failure)") }
        }
        _ = try? channel.finish()
        return collector.outcome
    }

    static func response(_ pieces: [[UInt8]], requestWasHead: Bool) -> Outcome {
        let channel = EmbeddedChannel()
        try! channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
        // The decoder learns the request's method from the head written through it.
        try! channel.writeOutbound(
            HTTPClientRequestPart.head(
                HTTPRequestHead(version: .http1_1, method: requestWasHead ? .HEAD : .GET, uri: "/")))
        var collector = Collector()
        var failure: Error?
        func drain() {
            while let part = try? channel.readInbound(as: HTTPClientResponsePart.self) {
                switch part {
                case .head(let head):
                    collector.heads.append(
                        DecodedMessage.Head(
                            start: ["\(head.status.code)"], minorVersion: head.version.minor,
                            fields: fields(head.headers)))
                case .body(let buffer): collector.body += buffer.readableBytesView
                case .end(let trailers): collector.end(trailers)
                }
                if collector.complete { return }
            }
        }
        for piece in pieces {
            do { try channel.writeInbound(ByteBuffer(bytes: piece)) } catch { failure = error }
            drain()
            if collector.complete { break }
            if let failure { return .refused("NIO: \(failure)") }
        }
        if !collector.complete {
            // The upstream closes: a body read until close ends here (RFC 9112 §6.3 rule 8).
            do { _ = try channel.finish() } catch { failure = error }
            drain()
            if !collector.complete, let failure { return .refused("NIO at EOF: \(failure)") }
        } else {
            _ = try? channel.finish()
        }
        return collector.outcome
    }

    /// NIO keeps a value's trailing whitespace (llhttp ends the value at CR); RFC 9110 §5.5 excludes it from the
    /// field value, and so does ours, so it is trimmed here before the comparison.
    private static func fields(_ headers: HTTPHeaders) -> [DecodedMessage.Field] {
        headers.map { field in
            var value = Array(field.value.utf8)
            while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
            return DecodedMessage.Field(name: Array(field.name.utf8), value: value)
        }
    }

    private struct Collector {
        var heads: [DecodedMessage.Head] = []
        var body: [UInt8] = []
        var trailers: [DecodedMessage.Field] = []
        var complete = false

        mutating func end(_ trailers: HTTPHeaders?) {
            self.trailers = trailers.map(NIOReference.fields) ?? []
            complete = true
        }

        var outcome: Outcome {
            complete ? .message(DecodedMessage(heads: heads, body: body, trailers: trailers)) : .incomplete
        }
    }
}
