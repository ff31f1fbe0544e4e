import NIOCore
import NIOHPACK
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane

extension UpstreamResponse {
    /// The codec's reading of `text`, an upstream's head, answering a request whose method was HEAD or not. A
    /// `101` is read as the answer to a request that asked to upgrade.
    static func parsing(_ text: String, requestWasHead: Bool = false) throws -> UpstreamResponse {
        let buffer = ByteBuffer(string: text)
        let head = try ResponseHead.parse(
            buffer.readableBytesUInt8Span, requestWasHead: requestWasHead, upgradeRequested: true,
            limits: ResponseDecoder.limits)
        guard let head, head.length == buffer.readableBytes else { throw Incomplete() }
        return UpstreamResponse(bytes: buffer, head: head)
    }

    struct Incomplete: Error {}

    /// `head` as the codec reads it from the bytes an upstream would send, for tests that speak in NIOHTTP1's types
    /// and mean a complete message: a head that says nothing of its body gets `Content-Length: 0`, and a `101` the
    /// handshake's `Upgrade` and `Connection` unless it has its own.
    init(_ head: HTTPResponseHead) {
        var head = head
        let code = head.status.code
        if code == 101 {
            if !head.headers.contains(name: "upgrade") { head.headers.add(name: "upgrade", value: "websocket") }
            if !head.headers.contains(name: "connection") { head.headers.add(name: "connection", value: "upgrade") }
        } else if code >= 200, code != 204, code != 304, !head.headers.contains(name: "content-length"),
            !head.headers.contains(name: "transfer-encoding")
        {
            head.headers.add(name: "content-length", value: "0")
        }
        self = try! Self.parsing(String(buffer: ResponseHeadBytes.bytes(head)))
    }
}

extension HTTPResponseHead {
    /// `bytes`, a head the proxy wrote, read back by the codec: the fields as strings, in order.
    init(written bytes: ByteBuffer, requestWasHead: Bool = false) throws {
        let response = try UpstreamResponse.parsing(String(buffer: bytes), requestWasHead: requestWasHead)
        var fields: [(String, String)] = []
        let start = bytes.readerIndex
        var lines = FieldLines(fieldsStart: response.head.fieldsStart, length: response.head.length)
        while let line = lines.next(in: bytes.readableBytesUInt8Span) {
            fields.append(
                (
                    bytes.getString(at: start + line.field.name.lowerBound, length: line.field.name.count)!,
                    bytes.getString(at: start + line.field.value.lowerBound, length: line.field.value.count)!
                ))
        }
        self.init(
            version: HTTPVersion(major: 1, minor: Int(response.head.minorVersion)), status: response.status,
            headers: HTTPHeaders(fields))
    }
}

extension Forwarding {
    /// The client's head for `upstream` (``writeClientHead(_:request:binding:adding:keepAlive:into:)``) read back
    /// by the codec.
    ///
    /// Every test that asks also checks an HTTP/2 client's header section for the same response
    /// (``HTTP2ResponseFields/forwarded(_:binding:adding:)``, built without the HTTP/1.1 head): it must be this head,
    /// as HTTP/2 carries one (``HTTP2ResponseFields/head(_:)``), field for field.
    static func clientResponse(
        upstream: UpstreamResponse, request: HTTPRequestHead, binding: RouteBinding, requestID: String,
        keepAlive: Bool, corsOrigin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (head: HTTPResponseHead, framing: Framing, bytes: ByteBuffer) {
        var bytes = ByteBuffer()
        let additions = ResponseAdditions(requestID: requestID, corsOrigin: corsOrigin)
        let framing = writeClientHead(
            upstream, request: RequestLine(request), binding: binding, adding: additions, keepAlive: keepAlive,
            into: &bytes)
        let written = try UpstreamResponse.parsing(String(buffer: bytes), requestWasHead: request.method == .HEAD)
        #expect(
            HTTP2ResponseFields.forwarded(upstream, binding: binding, adding: additions).described
                == HTTP2ResponseFields.head(written).described, sourceLocation: sourceLocation)
        return (try HTTPResponseHead(written: bytes, requestWasHead: request.method == .HEAD), framing, bytes)
    }
}

extension HPACKHeaders {
    /// Each field as `name: value`, with how HPACK may index it: what two sections are compared by.
    var described: [String] {
        map { "\($0.name): \($0.value) (\($0.indexable))" }
    }
}
