/// A response head (RFC 9112 §4, §5), validated, as offsets into the bytes it was parsed from.
package struct ResponseHead: Sendable, Equatable {
    package var status: Int
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    package var minorVersion: UInt8
    /// Where the first field line starts (just after the status line's CRLF).
    package var fieldsStart: Int
    /// The head's length, the empty line included: the body starts here.
    package var length: Int
    package var framing: BodyFraming
    package var connection: ConnectionOptions
    /// The head has a `Content-Length` field (whether or not it frames a body: after HEAD, and in a 304, it describes
    /// the body the request would have had, RFC 9110 §8.6).
    package var hasContentLength: Bool

    /// 1xx other than 101: a final response follows for the same request (RFC 9110 §15.2).
    package var isInformational: Bool { status < 200 && !switchesProtocols }

    /// A `101 Switching Protocols` to a request that asked to upgrade: what follows on the connection is the new
    /// protocol's (RFC 9110 §15.2.2).
    var switchesProtocols: Bool { status == 101 }

    /// Whether the upstream keeps the connection open after this response (RFC 9112 §9.3).
    package var keepAlive: Bool {
        guard framing != .untilClose else { return false }
        return minorVersion == 1 ? !connection.close : connection.keepAlive && !connection.close
    }

    /// Parses the head at the start of `bytes`, the answer to a request whose method was HEAD or not, and that
    /// asked to switch protocols or not: nil when `bytes` is a valid beginning that needs more bytes.
    package static func parse(
        _ bytes: Span<UInt8>, requestWasHead: Bool, upgradeRequested: Bool = false, limits: HeadLimits = HeadLimits()
    ) throws(HeadError) -> ResponseHead? {
        do throws(ScanStop) {
            var scanner = HeadScanner(bytes, limits: limits)
            let minor = try scanner.version(malformed: .statusLine, in: bytes)
            let status = try scanner.statusCodeAndReason(upgradeRequested: upgradeRequested, in: bytes)
            let fieldsStart = scanner.index
            var framing = FramingFields(refusesFramingOptions: false)
            var fields = 0
            var upgrades = 0
            while let field = try scanner.fieldLine(in: bytes) {
                fields += 1
                guard fields <= limits.fields else { throw ScanStop.refused(.headTooLarge) }
                try framing.note(field, in: bytes)
                if FieldName.equals(bytes, field.name, "upgrade") { upgrades += 1 }
            }
            // RFC 9110 §15.2.2: a 101 names the protocol it switches to in `Upgrade` (and, as a hop-by-hop field,
            // in `Connection`); one that does not leaves unclear what follows, and llhttp would read on as HTTP.
            if status == 101 {
                guard minor == 1, upgrades == 1, framing.connection.upgrade else {
                    throw ScanStop.refused(.malformed(.switchingProtocols))
                }
            }
            let hasFraming = framing.chunked || framing.contentLength != nil
            // RFC 9110 §8.6 and RFC 9112 §6.1: no Content-Length or Transfer-Encoding in 1xx or 204. Servers send
            // them anyway (`Content-Length: 0` on a 204 above all), and all three references read past them, giving
            // neither a body; so does the codec, and the proxy relays neither field (it writes its own 1xx, and
            // drops both from a 204: `Forwarding`). A 101 with them is refused: what follows it is not a body, and
            // not HTTP.
            if status == 101, hasFraming {
                throw ScanStop.refused(.malformed(.framingInInformational))
            }
            // A 1xx that would end the connection (HTTP/1.0, or `Connection: close`) leaves it unclear whether the
            // final response follows on it; NIO refuses what follows, and so the 1xx is refused here.
            if status < 200, minor == 0 || framing.connection.close {
                throw ScanStop.refused(.malformed(.informationalClosing))
            }
            if framing.chunked {
                guard minor == 1 else { throw ScanStop.refused(.malformed(.transferEncoding)) }
                guard framing.contentLength == nil else {
                    throw ScanStop.refused(.malformed(.contentLengthWithTransferEncoding))
                }
            }
            let bodyFraming: BodyFraming
            // RFC 9112 §6.3 rules 1–2: no body after HEAD, 1xx, 204 and 304, whatever the fields say.
            if requestWasHead || status < 200 || status == 204 || status == 304 {
                bodyFraming = .none
            } else if framing.chunked {
                bodyFraming = .chunked
            } else if let length = framing.contentLength {
                bodyFraming = length > 0 ? .length(length) : .none
            } else {
                bodyFraming = .untilClose
            }
            return ResponseHead(
                status: status, minorVersion: minor, fieldsStart: fieldsStart, length: scanner.index,
                framing: bodyFraming, connection: framing.connection, hasContentLength: framing.contentLength != nil)
        } catch {
            switch error {
            case .incomplete: return nil
            case .refused(let refusal): throw refusal
            }
        }
    }
}

extension HeadScanner {
    /// `SP status-code SP [ reason-phrase ] CRLF` (RFC 9112 §4): a status from 100 to 599 — 101 only when the
    /// request asked to upgrade (RFC 9110 §15.2.2: a server sends it only then) — and a reason of visible ASCII,
    /// spaces and tabs.
    mutating func statusCodeAndReason(upgradeRequested: Bool, in bytes: Span<UInt8>) throws(ScanStop) -> Int {
        guard try byte(at: index, in: bytes) == ASCII.space else { throw .refused(.malformed(.statusLine)) }
        var status = 0
        for offset in 1...3 {
            let digit = try byte(at: index + offset, in: bytes)
            guard ByteClass.isDigit(digit) else { throw .refused(.malformed(.statusLine)) }
            status = status * 10 + Int(digit &- UInt8(ascii: "0"))
        }
        index += 4
        guard (100...599).contains(status), status != 101 || upgradeRequested else {
            throw .refused(.malformed(.statusLine))
        }
        var byte = try self.byte(at: index, in: bytes)
        // RFC 9112 §4 asks for the space before an empty reason, but servers leave it out, and all three references
        // read `HTTP/1.1 200` CRLF alike (the response relay's differential test).
        if byte == ASCII.cr {
            try lineEnd(malformed: .statusLine, in: bytes)
            return status
        }
        guard byte == ASCII.space else { throw .refused(.malformed(.statusLine)) }
        index += 1
        byte = try self.byte(at: index, in: bytes)
        while ByteClass.isVisible(byte) || byte == ASCII.space || byte == ASCII.tab {
            index += 1
            byte = try self.byte(at: index, in: bytes)
        }
        try lineEnd(malformed: .statusLine, in: bytes)
        return status
    }
}
