import NIOCore
import NIOHTTP1

@testable import BearerCodec
@testable import BearerDataPlane

extension ClientRequest {
    /// `head` as the codec reads it from the bytes a client would send, for tests that speak in NIOHTTP1's types. An
    /// HTTP/1.1 head without a Host gets one in its bytes (the codec requires it; the proxy never forwards it).
    init(_ head: HTTPRequestHead) throws {
        var text = "\(head.method.rawValue) \(head.uri) HTTP/1.\(head.version.minor)\r\n"
        if head.version.minor == 1, !head.headers.contains(name: "host") { text += "host: localhost\r\n" }
        for (name, value) in head.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        let bytes = ByteBuffer(string: text)
        guard let parsed = try BearerCodec.RequestHead.parse(bytes.readableBytesUInt8Span, limits: Acceptor.headLimits)
        else {
            throw UpstreamResponse.Incomplete()
        }
        self.init(
            line: RequestLine(method: head.method, uri: head.uri, version: head.version), bytes: bytes,
            parsed: parsed)
    }
}

extension RequestLine {
    /// `head`'s line, for tests that speak in NIOHTTP1's types.
    init(_ head: HTTPRequestHead) {
        self.init(method: head.method, uri: head.uri, version: head.version)
    }
}

extension HTTPRequestHead {
    /// `bytes`, a request head the proxy wrote, read back by the codec: the fields as strings, in order.
    init(written bytes: ByteBuffer) throws {
        guard let parsed = try BearerCodec.RequestHead.parse(bytes.readableBytesUInt8Span, limits: Acceptor.headLimits),
            parsed.length == bytes.readableBytes
        else { throw UpstreamResponse.Incomplete() }
        let start = bytes.readerIndex
        func string(_ range: Range<Int>) -> String {
            bytes.getString(at: start + range.lowerBound, length: range.count)!
        }
        var fields: [(String, String)] = []
        var lines = FieldLines(fieldsStart: parsed.fieldsStart, length: parsed.length)
        while let line = lines.next(in: bytes.readableBytesUInt8Span) {
            fields.append((string(line.field.name), string(line.field.value)))
        }
        self.init(
            version: HTTPVersion(major: 1, minor: Int(parsed.minorVersion)),
            method: HTTPMethod(rawValue: string(parsed.method)), uri: string(parsed.target),
            headers: HTTPHeaders(fields))
    }
}

extension Forwarding {
    /// The upstream's head for `client` (``upstreamHead(client:binding:remainder:query:authorization:requestID:clientAddress:webSocket:)``)
    /// read back by the codec. Throws when the codec refuses `client`: such a request is never forwarded.
    static func upstreamRequest(
        client: HTTPRequestHead, binding: RouteBinding, remainder: Substring, query: Substring?, authorization: String?,
        requestID: String, clientAddress: String?, webSocket: Bool = false
    ) throws -> HTTPRequestHead {
        try HTTPRequestHead(
            written: writtenUpstreamHead(
                client: client, binding: binding, remainder: remainder, query: query, authorization: authorization,
                requestID: requestID, clientAddress: clientAddress, webSocket: webSocket
            ).bytes)
    }

    static func writtenUpstreamHead(
        client: HTTPRequestHead, binding: RouteBinding, remainder: Substring, query: Substring?, authorization: String?,
        requestID: String, clientAddress: String?, webSocket: Bool = false
    ) throws -> UpstreamRequestHead {
        var out = ByteBuffer()
        return upstreamHead(
            client: try ClientRequest(client), binding: binding, remainder: remainder, query: query,
            authorization: authorization, requestID: requestID, clientAddress: clientAddress, webSocket: webSocket,
            into: &out)
    }
}

extension ClientRequestPart {
    /// A head in NIOHTTP1's type, as the codec reads it (``ClientRequest/init(_:)``): for the machines' tests.
    static func head(_ head: HTTPRequestHead) -> ClientRequestPart {
        .head(try! ClientRequest(head))
    }

    /// NIOHTTP1's end: its trailers are dropped, as the decoder drops them.
    static func end(_ trailers: HTTPHeaders?) -> ClientRequestPart { .end }

    /// NIOHTTP1's part as the decoder delivers it.
    init(_ part: HTTPServerRequestPart) {
        switch part {
        case .head(let head): self = .head(head)
        case .body(let body): self = .body(body)
        case .end: self = .end
        }
    }
}

extension UpstreamRequestPart {
    var isEnd: Bool {
        if case .end = self { return true }
        return false
    }
}

extension RequestGuard {
    /// The guard's decision on `head` as the codec reads it from a client's bytes (``ClientRequest/init(_:)``).
    func check(_ head: HTTPRequestHead) throws -> GuardDecision {
        check(try ClientRequest(head))
    }
}

extension WebSocketUpgrade {
    static func requested(_ head: HTTPRequestHead) throws -> Requested {
        requested(try ClientRequest(head))
    }
}

extension MethodOverride {
    static func forbidden(headers: HTTPHeaders, query: Substring?, allowed: Set<String>) throws -> String? {
        forbidden(
            request: try ClientRequest(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: headers)),
            query: query, allowed: allowed)
    }
}
