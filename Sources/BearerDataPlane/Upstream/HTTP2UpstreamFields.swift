import BearerCodec
import BearerHTTP
import NIOCore
import NIOHPACK
import NIOHTTP1

/// The exchange's HTTP/1.1 request head as an HTTP/2 header section for an upstream (RFC 9113 §8.3.1), and an HTTP/2
/// upstream's header sections as the response head and trailer section the exchange reads (RFC 9113 §8.3.2).
///
/// The request head is the proxy's own (``Forwarding`` wrote it, token and all), read here by the codec's strict
/// parser. A response's fields come from HPACK, decoded by NIOHTTP2, and are written as HTTP/1.1 field lines that the
/// same strict parser then reads: a CR, LF or NUL in a value, or a name that is not a lowercase token, would make the
/// bytes say something the frames did not, so any such section is malformed (RFC 9113 §8.2.1) before a byte is written.
enum HTTP2UpstreamFields {
    /// Why a request cannot go to an HTTP/2 upstream, or a response from one is malformed (RFC 9113 §8.1.1).
    struct Malformed: Error, Equatable, CustomStringConvertible {
        var reason: String
        var description: String { "HTTP/2 upstream: \(reason)" }
    }

    /// The request heads the proxy writes: its own fields (the token, the request id, forwarded fields) beside the
    /// 100 a client may send, and targets as long as the client side lets in.
    static let requestLimits = HeadLimits(headBytes: 256 * 1024, targetBytes: 64 * 1024, fields: 512)

    /// A request's header section, and whether a body follows it.
    struct Request {
        var headers: HPACKHeaders
        /// The head announces a body (`content-length` above 0, or chunks): without one the header section ends the
        /// stream (RFC 9113 §8.1). A request stream left open after a complete answer is one the server resets with
        /// NO_ERROR (nginx does, for every such GET), and a reset per request soon reads as a reset flood.
        var hasBody: Bool
    }

    /// The header section of `head`, sent with `scheme` (the upstream's). `Host` becomes `:authority`; the fields that
    /// belong to one HTTP/1.1 connection are dropped (RFC 9113 §8.2.2) — `Connection` and those it names,
    /// `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade` — and `TE` is always `trailers`.
    static func request(_ head: UpstreamRequestHead, scheme: String) throws(Malformed) -> Request {
        // RFC 9113 §8.6: HTTP/2 has no `101`; a WebSocket over HTTP/2 needs extended CONNECT (RFC 8441), not offered.
        guard !head.asksToUpgrade else {
            throw Malformed(reason: "a request to switch protocols cannot go over HTTP/2")
        }
        let bytes = head.bytes
        let span = bytes.readableBytesUInt8Span
        let parsed: RequestHead
        do {
            guard let complete = try RequestHead.parse(span, limits: requestLimits) else {
                throw Malformed(reason: "an incomplete request head")
            }
            parsed = complete
        } catch let error as Malformed {
            throw error
        } catch {
            throw Malformed(reason: "an unreadable request head")
        }
        let start = bytes.readerIndex
        func string(_ range: Range<Int>) -> String {
            bytes.getString(at: start + range.lowerBound, length: range.count) ?? ""
        }
        var named: Set<String> = []
        var fields: [(String, String)] = []
        var authority: String?
        var lines = FieldLines(fieldsStart: parsed.fieldsStart, length: parsed.length)
        while let line = lines.next(in: span) {
            let name = string(line.field.name).lowercased()
            let value = string(line.field.value)
            switch name {
            case "host": authority = value
            case "connection": HopByHop.forEachOption(in: value) { named.insert(String(Substring($0)).lowercased()) }
            case "te": continue  // the proxy's own, below
            default: fields.append((name, value))
            }
        }
        var headers = HPACKHeaders()
        headers.reserveCapacity(fields.count + 4)
        headers.add(name: ":method", value: string(parsed.method))
        headers.add(name: ":scheme", value: scheme)
        if let authority { headers.add(name: ":authority", value: authority) }
        headers.add(name: ":path", value: string(parsed.target))
        for (name, value) in fields
        where !HTTP2RequestHead.connectionSpecific.contains(name) && !named.contains(name) {
            headers.add(name: name, value: value)
        }
        // The proxy takes trailers from an HTTP/2 upstream (RFC 9110 §10.1.4) and passes them on, so it says so,
        // whatever the client's TE said on its own hop: gRPC servers refuse a call without `te: trailers`
        // (gRPC's PROTOCOL-HTTP2.md).
        headers.add(name: "te", value: "trailers")
        let hasBody: Bool
        switch parsed.framing {
        case .none, .length(0): hasBody = false
        case .length, .chunked, .untilClose: hasBody = true
        }
        return Request(headers: headers, hasBody: hasBody)
    }

    /// The response head of `headers`, a response's header section, read by the codec's parser as an HTTP/1.1 head
    /// would be (the answer to a `HEAD` request when `requestWasHead`). A final response without `content-length`
    /// whose body is delimited by END_STREAM reads as chunked, so that the exchange keeps its own framing rules — unless
    /// the section itself ends the stream (`endsStream`): there is no body, and `content-length: 0` says so, so that
    /// the answer goes on as one header section. gRPC's "Trailers-Only" answer (a server's error status) is exactly
    /// that, and a gRPC client reads a header section followed by an empty DATA frame as a broken stream.
    static func response(
        _ headers: HPACKHeaders, requestWasHead: Bool, endsStream: Bool = false
    ) throws(Malformed) -> UpstreamResponse {
        var status: Int?
        var bytes = ByteBuffer()
        bytes.reserveCapacity(64 + headers.count * 32)
        var fields = ByteBuffer()
        var hasLength = false
        for (name, value, _) in headers {
            if name.utf8.first == UInt8(ascii: ":") {
                guard name == ":status", status == nil, fields.readableBytes == 0,
                    value.utf8.count == 3, let code = Int(value), (100...599).contains(code)
                else { throw Malformed(reason: "a response's pseudo-header fields are malformed") }
                status = code
                continue
            }
            try checkField(name, value)
            if name == "content-length" { hasLength = true }
            write(name, value, into: &fields)
        }
        guard let status else { throw Malformed(reason: "a response without :status") }
        // RFC 9113 §8.6: no `101` over HTTP/2.
        guard status != 101 else { throw Malformed(reason: "a 101 response") }
        bytes.writeString("HTTP/1.1 \(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase)\r\n")
        bytes.writeImmutableBuffer(fields)
        if status >= 200, !hasLength {
            // RFC 9110 §8.6: no Content-Length in a 204, nor in a 304 or a HEAD answer, where it would describe a
            // body this response does not have; those have no body to frame either way.
            if !endsStream {
                bytes.writeString("transfer-encoding: chunked\r\n")
            } else if status != 204, status != 304, !requestWasHead {
                bytes.writeString("content-length: 0\r\n")
            }
        }
        bytes.writeString("\r\n")
        do {
            guard
                let head = try ResponseHead.parse(
                    bytes.readableBytesUInt8Span, requestWasHead: requestWasHead, limits: ResponseDecoder.limits)
            else { throw Malformed(reason: "an incomplete response head") }
            return UpstreamResponse(bytes: bytes, head: head)
        } catch let error as Malformed {
            throw error
        } catch {
            throw Malformed(reason: "a response head the proxy refuses")
        }
    }

    /// The trailer section `headers` as field lines, each ending in CRLF (``UpstreamResponsePart/end(trailers:)``).
    static func trailers(_ headers: HPACKHeaders) throws(Malformed) -> ByteBuffer {
        var bytes = ByteBuffer()
        for (name, value, _) in headers {
            // RFC 9113 §8.1: trailers carry no pseudo-header fields.
            guard name.utf8.first != UInt8(ascii: ":") else { throw Malformed(reason: "a pseudo-header in trailers") }
            try checkField(name, value)
            write(name, value, into: &bytes)
        }
        return bytes
    }

    private static func checkField(_ name: String, _ value: String) throws(Malformed) {
        guard HTTP2RequestHead.isFieldName(name) else {
            throw Malformed(reason: "a field name is not a lowercase token")
        }
        // RFC 9113 §8.2.2: a response carrying one is malformed. Written as HTTP/1.1, `transfer-encoding` would
        // change how the exchange frames the body it passes on; NIOHTTP2 refuses these too, and this does not
        // depend on it.
        guard !HTTP2RequestHead.connectionSpecific.contains(name) else {
            throw Malformed(reason: "a connection-specific field \(name)")
        }
        guard HTTP2RequestHead.isFieldValue(value) else {
            throw Malformed(reason: "a field value holds CR, LF, NUL or edge spaces")
        }
    }

    private static func write(_ name: String, _ value: String, into bytes: inout ByteBuffer) {
        bytes.writeString(name)
        bytes.writeString(": ")
        bytes.writeString(value)
        bytes.writeString("\r\n")
    }
}
