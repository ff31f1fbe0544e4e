import NIOCore
import NIOEmbedded
import NIOHTTP1

/// NIOHTTP1's request decoder (llhttp) as a reference, configured as the proxy configures it
/// (`Sources/BearerDataPlane/Listening/Acceptor.swift`: `HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)`), in
/// an `EmbeddedChannel` fed the stream's reads one by one.
///
/// What a server does around the decoder is done here the way the proxy does it: a message that ends the
/// connection (not keep-alive, RFC 9112 §9.3) ends the reading; after an upgrade the decoder stops and hands back the
/// bytes it did not parse, which are the leftover (RFC 9110 §7.8).
enum NIOStreamReference {
    static func requests(_ input: DifferentialInput) -> StreamVerdict {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
        try! channel.pipeline.syncOperations.addHandler(decoder)
        var collector = Collector()
        let pieces = input.pieces
        for (index, piece) in pieces.enumerated() {
            var failure: (any Error)?
            do { try channel.writeInbound(ByteBuffer(bytes: piece)) } catch { failure = error }
            collector.drain(channel)
            if let end = collector.stopped {
                var leftover: Int?
                if end == .upgrade {
                    // The decoder hands back what it did not parse when it leaves the pipeline.
                    channel.pipeline.syncOperations.removeHandler(decoder, promise: nil)
                    channel.embeddedEventLoop.run()
                    var handedBack = 0
                    while let buffer = try? channel.readInbound(as: ByteBuffer.self) {
                        handedBack += buffer.readableBytes
                    }
                    leftover = handedBack + pieces[(index + 1)...].reduce(0) { $0 + $1.count }
                }
                return StreamVerdict(messages: collector.messages, end: end, leftover: leftover)
            }
            if let failure {
                return StreamVerdict(messages: collector.messages, end: .error, error: "\(failure)")
            }
        }
        if collector.current != nil {
            return StreamVerdict(messages: collector.messages, end: .incomplete)
        }
        // llhttp has consumed every byte; whether some of them began a message it tells only at the end of input.
        do {
            _ = try channel.finish()
        } catch {
            return StreamVerdict(messages: collector.messages, end: .incomplete)
        }
        return StreamVerdict(messages: collector.messages, end: .clean, leftover: 0)
    }

    /// NIO's strings as the bytes it read: NIO decodes names, values and the target as UTF-8 (repairing what is
    /// not), and the model compares bytes in Latin-1.
    static func latin1(_ text: String) -> String {
        Latin1.string(text.utf8)
    }

    static func fields(_ headers: HTTPHeaders) -> [FieldLine] {
        headers.map { FieldLine(name: latin1($0.name), value: latin1($0.value)) }
    }

    private struct Collector {
        var messages: [FramedMessage] = []
        var current: FramedMessage?
        var currentHead: HTTPRequestHead?
        var stopped: StreamVerdict.End?

        mutating func drain(_ channel: EmbeddedChannel) {
            while stopped == nil, let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
                switch part {
                case .head(let head):
                    currentHead = head
                    current = FramedMessage(
                        method: NIOStreamReference.latin1(head.method.rawValue),
                        target: NIOStreamReference.latin1(head.uri),
                        version: "HTTP/\(head.version.major).\(head.version.minor)",
                        fields: NIOStreamReference.fields(head.headers),
                        body: [], trailers: [])
                case .body(let buffer):
                    current?.body += buffer.readableBytesView
                case .end(let trailers):
                    guard var message = current, let head = currentHead else { continue }
                    message.trailers = trailers.map(NIOStreamReference.fields) ?? []
                    messages.append(message)
                    current = nil
                    currentHead = nil
                    if SwitchingProtocols.isUpgrade(
                        method: head.method.rawValue, head.headers.map { ($0.name, $0.value) })
                    {
                        stopped = .upgrade
                    } else if !head.isKeepAlive {
                        stopped = .close
                    }
                }
            }
        }
    }
}
