/// A request head (RFC 9112 §3, §5), validated, as offsets into the bytes it was parsed from.
package struct RequestHead: Sendable, Equatable {
    package var method: Range<Int>
    package var target: Range<Int>
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    package var minorVersion: UInt8
    /// Where the first field line starts (just after the request line's CRLF).
    package var fieldsStart: Int
    /// The head's length, the empty line included: the body starts here.
    package var length: Int
    package var framing: BodyFraming
    package var connection: ConnectionOptions
    /// The method is HEAD: the response has no body (RFC 9110 §9.3.2).
    package var isHead: Bool
    /// The request carries an `Upgrade` field and lists `upgrade` in `Connection`: it asks to switch protocols
    /// (RFC 9110 §7.8), and whatever follows it on the connection is not HTTP/1.1 unless the answer says no.
    package var asksToUpgrade: Bool
    /// The head has a `Content-Length` field (`0` frames no body, but the client said so: the proxy says so too).
    package var hasContentLength: Bool
    /// The value of the first `X-Request-Id` field, if any; and whether there is an `Expect` field. Noted while the
    /// fields are scanned, so that nothing after the codec walks the field lines again for them.
    package var requestID: Range<Int>? = nil
    package var hasExpect = false

    /// Whether the client may send another request on this connection (RFC 9112 §9.3).
    package var keepAlive: Bool {
        minorVersion == 1 ? !connection.close : connection.keepAlive && !connection.close
    }

    /// Parses the head at the start of `bytes`: nil when `bytes` is a valid beginning that needs more bytes.
    package static func parse(_ bytes: Span<UInt8>, limits: HeadLimits = HeadLimits()) throws(HeadError)
        -> RequestHead?
    {
        do throws(ScanStop) {
            var scanner = HeadScanner(bytes, limits: limits)
            let method = try scanner.method(in: bytes)
            let target = try scanner.requestTarget(method: method, in: bytes)
            let minor = try scanner.version(malformed: .requestLine, in: bytes)
            try scanner.lineEnd(malformed: .requestLine, in: bytes)
            let fieldsStart = scanner.index
            var framing = FramingFields(refusesFramingOptions: true)
            var fields = 0
            var hosts = 0
            var upgrades = 0
            var hasExpect = false
            var requestID: Range<Int>?
            while let field = try scanner.fieldLine(in: bytes) {
                fields += 1
                guard fields <= limits.fields else { throw ScanStop.refused(.headTooLarge) }
                try framing.note(field, in: bytes)
                if FieldName.equals(bytes, field.name, "host") {
                    hosts += 1
                    try checkHost(field.value, in: bytes)
                } else if FieldName.equals(bytes, field.name, "upgrade") {
                    upgrades += 1
                } else if FieldName.equals(bytes, field.name, "expect") {
                    hasExpect = true
                } else if requestID == nil, FieldName.equals(bytes, field.name, "x-request-id") {
                    requestID = field.value
                }
            }
            // RFC 9112 §3.2: exactly one Host in HTTP/1.1 (a server MUST answer 400 otherwise); at most one in 1.0.
            guard hosts == 1 || (minor == 0 && hosts == 0) else { throw ScanStop.refused(.malformed(.host)) }
            // The proxy writes Host and Authorization itself: a Connection naming them would make the client's
            // choice of fields the proxy's.
            for option in framing.connection.named
            where FieldName.equals(bytes, option, "host") || FieldName.equals(bytes, option, "authorization") {
                throw ScanStop.refused(.malformed(.connection))
            }
            let bodyFraming: BodyFraming
            if framing.chunked {
                // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing; with Content-Length it is the
                // classic smuggling shape (§6.3 rule 3 lets a server go on; this one refuses).
                guard minor == 1 else { throw ScanStop.refused(.malformed(.transferEncoding)) }
                guard framing.contentLength == nil else {
                    throw ScanStop.refused(.malformed(.contentLengthWithTransferEncoding))
                }
                bodyFraming = .chunked
            } else if let length = framing.contentLength, length > 0 {
                bodyFraming = .length(length)
            } else {
                bodyFraming = .none
            }
            return RequestHead(
                method: method, target: target, minorVersion: minor, fieldsStart: fieldsStart, length: scanner.index,
                framing: bodyFraming, connection: framing.connection,
                isHead: KnownMethod.equals(bytes, method, "HEAD"),
                asksToUpgrade: framing.connection.upgrade && upgrades > 0,
                hasContentLength: framing.contentLength != nil, requestID: requestID, hasExpect: hasExpect)
        } catch {
            switch error {
            case .incomplete: return nil
            case .refused(let refusal): throw refusal
            }
        }
    }

    /// `Host = uri-host [ ":" port ]` (RFC 9110 §7.2): not empty, only the bytes of a reg-name, an IP-literal and a
    /// port.
    private static func checkHost(_ value: Range<Int>, in bytes: Span<UInt8>) throws(ScanStop) {
        guard !value.isEmpty else { throw .refused(.malformed(.host)) }
        for index in value where !ByteClass.isHostByte(bytes[index]) {
            throw .refused(.malformed(.host))
        }
    }
}

extension HeadScanner {
    /// `method SP` (RFC 9112 §3.1): a token from ``KnownMethod``, then exactly one space.
    mutating func method(in bytes: Span<UInt8>) throws(ScanStop) -> Range<Int> {
        let start = index
        var byte = try self.byte(at: index, in: bytes)
        // RFC 9112 §2.2 lets a server skip empty lines before a request; this one refuses them.
        if byte == ASCII.cr || byte == ASCII.lf { throw .refused(.malformed(.leadingEmptyLine)) }
        while ByteClass.isTchar(byte) {
            index += 1
            guard index - start <= 16 else { throw .refused(.unknownMethod) }
            byte = try self.byte(at: index, in: bytes)
        }
        guard byte == ASCII.space, index > start else { throw .refused(.malformed(.requestLine)) }
        let method = start..<index
        // RFC 9110 §9.3.6: CONNECT asks for a tunnel, which a reverse proxy does not make (SPEC §9: 405).
        if KnownMethod.equals(bytes, method, "CONNECT") { throw .refused(.methodNotAllowed) }
        guard KnownMethod.isKnown(bytes, method) else { throw .refused(.unknownMethod) }
        index += 1
        return method
    }

    /// `request-target SP` (RFC 9112 §3.2): origin-form, absolute-form, or `*` for OPTIONS; only the bytes RFC 3986
    /// allows, each `%` followed by two hex digits.
    mutating func requestTarget(method: Range<Int>, in bytes: Span<UInt8>) throws(ScanStop) -> Range<Int> {
        let start = index
        var byte = try self.byte(at: index, in: bytes)
        while byte != ASCII.space {
            guard ByteClass.isTargetByte(byte) else { throw .refused(.malformed(.requestTarget)) }
            if byte == ASCII.percent {
                guard ByteClass.hexValue(try self.byte(at: index + 1, in: bytes)) != nil,
                    ByteClass.hexValue(try self.byte(at: index + 2, in: bytes)) != nil
                else { throw .refused(.malformed(.requestTarget)) }
                index += 2
            }
            index += 1
            guard index - start <= limits.targetBytes else { throw .refused(.targetTooLong) }
            byte = try self.byte(at: index, in: bytes)
        }
        let target = start..<index
        guard !target.isEmpty else { throw .refused(.malformed(.requestTarget)) }
        let first = bytes[start]
        if first == ASCII.slash {
            // origin-form
        } else if first == UInt8(ascii: "*") {
            guard target.count == 1, KnownMethod.equals(bytes, method, "OPTIONS") else {
                throw .refused(.malformed(.requestTarget))
            }
        } else {
            try checkAbsoluteForm(target, in: bytes)
        }
        index += 1
        return target
    }

    /// absolute-form: `"http" / "https" "://" authority [ path-abempty ] [ "?" query ]` (RFC 9110 §4.2) with a
    /// non-empty authority; a reverse proxy has no use for other schemes.
    private func checkAbsoluteForm(_ target: Range<Int>, in bytes: Span<UInt8>) throws(ScanStop) {
        var index = target.lowerBound
        for expected in "http".utf8 {
            guard index < target.upperBound, bytes[index] | 0x20 == expected else {
                throw .refused(.malformed(.requestTarget))
            }
            index += 1
        }
        if index < target.upperBound, bytes[index] | 0x20 == UInt8(ascii: "s") { index += 1 }
        guard target.upperBound - index > 3, bytes[index] == ASCII.colon, bytes[index + 1] == ASCII.slash,
            bytes[index + 2] == ASCII.slash, bytes[index + 3] != ASCII.slash,
            bytes[index + 3] != UInt8(ascii: "?")
        else { throw .refused(.malformed(.requestTarget)) }
    }
}
