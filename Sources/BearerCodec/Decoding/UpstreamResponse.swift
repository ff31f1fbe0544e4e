import NIOCore
import NIOHTTP1

/// An upstream's response head as the codec read it: its own bytes, and where its parts lie in them. The client's head
/// is written from these bytes in one pass (``Forwarding``); field values become strings only on the rare paths that
/// read them — a `401`'s or `403`'s challenge, a `101`'s fields.
package struct UpstreamResponse: Sendable, Equatable {
    /// The head, its empty line included: a slice of the bytes read, not a copy.
    package let bytes: ByteBuffer
    /// Offsets into ``bytes``' readable bytes.
    package let head: ResponseHead

    package init(bytes: ByteBuffer, head: ResponseHead) {
        self.bytes = bytes
        self.head = head
    }

    package var status: HTTPResponseStatus { HTTPResponseStatus(statusCode: head.status) }

    /// Whether the upstream keeps the connection open after this response (RFC 9112 §9.3).
    package var keepAlive: Bool { head.keepAlive }

    /// The value of the first field named `lowercaseName`, without surrounding whitespace; nil when there is none.
    /// One pass over the field lines and a string for that value only, for a field read on every response of some
    /// exchanges (a DPoP route's `DPoP-Nonce`).
    package func firstValue(of lowercaseName: StaticString) -> String? {
        var lines = FieldLines(fieldsStart: head.fieldsStart, length: head.length)
        let span = bytes.readableBytesUInt8Span
        while let line = lines.next(in: span) {
            guard FieldName.equals(span, line.field.name, lowercaseName) else { continue }
            let value = line.field.value
            return bytes.getString(at: bytes.readerIndex + value.lowerBound, length: value.count)
        }
        return nil
    }

    /// The field lines as NIOHTTP1's headers, for the paths that read values.
    package var headers: HTTPHeaders {
        HTTPHeaders(
            HeadFields.strings(
                in: bytes, fieldsStart: head.fieldsStart, length: head.length, minorVersion: head.minorVersion,
                connection: head.connection))
    }
}
