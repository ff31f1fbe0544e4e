import BearerCodec
import BearerConfiguration
import BearerHTTP
import NIOCore
import NIOHTTP1

/// The response on its way back (SPEC §8), written as bytes in one pass over the upstream's field lines: no
/// `HTTPHeaders`, no `String` per field.
extension Forwarding {
    /// What the proxy adds to a forwarded response's head, besides framing and `Connection`.
    struct ResponseAdditions {
        var requestID: String
        /// The allowed browser origin the response names (``CORS``), if the request came from one.
        var corsOrigin: String?

        init(requestID: String, corsOrigin: String? = nil) {
            self.requestID = requestID
            self.corsOrigin = corsOrigin
        }
    }

    /// Writes the head the client receives for the upstream's `response` to `request` into `out`, and says how its
    /// body is framed.
    ///
    /// The status line takes the client's version, with the code and reason as they came; end-to-end fields pass
    /// through as their bytes, in order, in runs; hop-by-hop ones and those the upstream's `Connection` names are
    /// dropped (RFC 9110 §7.6.1), with those the proxy writes itself (``HeaderPolicy``: `X-Request-Id`; the CORS
    /// fields for a browser's request); a `Location` that points into the route's upstream is rewritten to the local
    /// prefix (so following it stays on the proxy); framing is re-derived for the client's version
    /// (``responseFraming(_:request:)``). On a route that signs DPoP proofs (``RouteBinding/proofs``) the upstream's
    /// `DPoP-Nonce` is dropped too: the nonce is for the proofs the proxy signs (RFC 9449 §9), kept by the proxy, and
    /// a client's own proof never reaches the upstream.
    static func writeClientHead(
        _ response: UpstreamResponse, request: RequestLine, binding: RouteBinding,
        adding additions: ResponseAdditions,
        keepAlive: Bool, into out: inout ByteBuffer
    ) -> Framing {
        let head = response.head
        let bytes = response.bytes.readableBytesUInt8Span
        let framing = responseFraming(response, request: request)
        // What the head can take: the upstream's head, the id and the proxy's own lines; a rewritten `Location` or
        // the CORS fields may need more, which costs a second pass (``HeadBytes``).
        let bound = head.length + additions.requestID.utf8.count + 96 + (additions.corsOrigin?.utf8.count ?? 0) * 2
        out.writeHead(bound: bound) { out in
            head.writeStatusLine(bytes, minorVersion: request.version.minor, into: &out)
            let browser = additions.corsOrigin != nil
            let signsProofs = binding.proofs != nil
            var runStart = head.fieldsStart
            var runEnd = head.fieldsStart
            var lines = FieldLines(fieldsStart: head.fieldsStart, length: head.length)
            while let line = lines.next(in: bytes) {
                let name = line.field.name
                let location: String?
                switch clientField(
                    line.field, of: response, in: bytes, binding: binding, browser: browser, signsProofs: signsProofs)
                {
                case .kept:
                    runEnd = line.line.upperBound
                    continue
                case .dropped:
                    location = nil
                case .location(let rewritten):
                    location = rewritten
                }
                if runEnd > runStart { out.append(bytes.extracting(runStart..<runEnd)) }
                if let location {
                    out.append(bytes.extracting(name))
                    out.append(": ")
                    out.append(contentsOf: location)
                    out.append("\r\n")
                }
                runStart = line.line.upperBound
                runEnd = runStart
            }
            if runEnd > runStart { out.append(bytes.extracting(runStart..<runEnd)) }

            out.append("x-request-id: ")
            out.append(contentsOf: additions.requestID)
            out.append("\r\n")
            if let origin = additions.corsOrigin { CORS.write(origin: origin, into: &out) }
            if framing == .chunked { out.append("transfer-encoding: chunked\r\n") }
            if !keepAlive || framing == .untilClose {
                out.append("connection: close\r\n")
            } else if request.version.minor == 0 {
                out.append("connection: keep-alive\r\n")
            }
            out.append("\r\n")
        }
        return framing
    }

    /// What the client gets of one of the upstream's field lines.
    enum ClientField: Equatable {
        case kept
        case dropped
        /// A `Location` into the route's upstream, with the local prefix in its place (``rewriteLocation(_:binding:)``).
        case location(String)
    }

    /// What the client gets of `field`, a line of the upstream's `response` (`bytes` are its readable bytes), on
    /// either wire: the HTTP/1.1 head's bytes (``writeClientHead(_:request:binding:adding:keepAlive:into:)``) and an
    /// HTTP/2 stream's header section (``HTTP2ResponseFields/forwarded(_:binding:adding:)``) keep and drop the same
    /// fields.
    static func clientField(
        _ field: FieldLine, of response: UpstreamResponse, in bytes: Span<UInt8>, binding: RouteBinding, browser: Bool,
        signsProofs: Bool
    ) -> ClientField {
        if isDroppedDown(field.name, of: response.head, in: bytes, browser: browser, signsProofs: signsProofs) {
            return .dropped
        }
        guard FieldName.equals(bytes, field.name, "location"),
            let value = response.bytes.getString(
                at: response.bytes.readerIndex + field.value.lowerBound, length: field.value.count),
            case let rewritten = rewriteLocation(value, binding: binding), rewritten != value
        else { return .kept }
        return .location(rewritten)
    }

    /// Whether the field `name` of the upstream's `head` is not forwarded: ``HeaderPolicy``'s rules, the upstream's
    /// `Connection` options, the CORS fields the proxy writes for a browser, the `DPoP-Nonce` of a route that
    /// `signsProofs` (the proxy's protocol state, RFC 9449 §9), and a `Content-Length` in a 204 (RFC 9110 §8.6: none
    /// may be sent; the codec reads past it, as all three references do).
    private static func isDroppedDown(
        _ name: Range<Int>, of head: ResponseHead, in bytes: Span<UInt8>, browser: Bool, signsProofs: Bool
    ) -> Bool {
        if !HeaderPolicy.rules(of: bytes, name).isDisjoint(with: .notForwardedDown) { return true }
        for option in head.connection.named where FieldName.equals(bytes, name, option) { return true }
        if browser, CORS.isReplaced(bytes, name) { return true }
        if signsProofs, FieldName.equals(bytes, name, "dpop-nonce") { return true }
        return head.status == 204 && FieldName.equals(bytes, name, "content-length")
    }

    /// How the response to `request` is delimited for the client: decided from the upstream's head alone, so the
    /// exchange's machine knows before the head is written whether the client's connection must close after it
    /// (``Framing/untilClose``). A `Content-Length` is forwarded — and frames the body — unless the upstream's
    /// `Connection` names it (RFC 9110 §7.6.1); the codec refuses one beside `Transfer-Encoding`.
    static func responseFraming(_ response: UpstreamResponse, request: RequestLine) -> Framing {
        let head = response.head
        var forwardsLength = head.hasContentLength
        if forwardsLength, !head.connection.named.isEmpty {
            let bytes = response.bytes.readableBytesUInt8Span
            forwardsLength = !head.connection.named.contains { FieldName.equals(bytes, $0, "content-length") }
        }
        let code = head.status
        // RFC 9110 §9.3.2, §15.3.5, §15.4.5: no content.
        if request.method == .HEAD || code / 100 == 1 || code == 204 || code == 304 { return .none }
        if forwardsLength { return .contentLength }
        return request.version.minor >= 1 ? .chunked : .untilClose
    }

    /// The upstream's trailer section as the client gets it: without the fields that may never be trailers (RFC
    /// 9110 §6.5.1: framing, routing and connection management — Content-Length, Transfer-Encoding, Host and the
    /// hop-by-hop fields), which a recipient would read as a second header section. h11 refuses a response whose
    /// trailers name Transfer-Encoding, which the proxy relayed as sent (the long differential run, seed 41). Returned
    /// as it is, without a copy, when there is nothing to drop; nil when nothing is left.
    static func clientTrailers(_ trailers: ByteBuffer?) -> ByteBuffer? {
        guard let trailers else { return nil }
        let bytes = trailers.readableBytesUInt8Span
        // The section's lines end with CRLF; `FieldLines` reads up to a head's empty line, which is two bytes on.
        let length = trailers.readableBytes + 2
        var lines = FieldLines(fieldsStart: 0, length: length)
        var dropsAny = false
        while !dropsAny, let line = lines.next(in: bytes) { dropsAny = isNeverATrailer(line.field.name, in: bytes) }
        guard dropsAny else { return trailers }
        var kept = ByteBuffer()
        HeadWriter.copyFields(bytes, fieldsStart: 0, length: length, into: &kept) { field in
            isNeverATrailer(field.name, in: bytes)
        }
        return kept.readableBytes > 0 ? kept : nil
    }

    private static func isNeverATrailer(_ name: Range<Int>, in bytes: Span<UInt8>) -> Bool {
        FieldName.equals(bytes, name, "content-length") || FieldName.equals(bytes, name, "host")
            || HeaderPolicy.rules(of: bytes, name).contains(.hopByHop)
    }
}
