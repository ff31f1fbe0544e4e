import BearerCodec
import BearerHTTP
import NIOCore
import NIOHTTP1

/// A request's line — method, target, version — as the exchange records it; the fields stay in the head's bytes
/// (``ClientRequest``). A value of its own rather than NIOHTTP1's `HTTPRequestHead`, whose storage is a class: one
/// allocation and a retain for every copy, on every request, for fields the data plane never puts there (#24
/// session 18).
package struct RequestLine: Sendable, Equatable {
    package var method: HTTPMethod
    package var uri: String
    package var version: HTTPVersion

    package init(method: HTTPMethod, uri: String, version: HTTPVersion) {
        self.method = method
        self.uri = uri
        self.version = version
    }

    /// The line of the head `parsed` at the start of `buffer`'s readable bytes.
    package init(_ parsed: RequestHead, in buffer: ByteBuffer) {
        let start = buffer.readerIndex
        func string(_ range: Range<Int>) -> String {
            buffer.getString(at: start + range.lowerBound, length: range.count) ?? ""
        }
        self.version = HTTPVersion(major: 1, minor: Int(parsed.minorVersion))
        self.method = Self.commonMethod(parsed, in: buffer) ?? HTTPMethod(rawValue: string(parsed.method)).asReceived
        self.uri = string(parsed.target)
    }

    /// The methods nearly every request uses, named without building a string and matching it against every
    /// method NIOHTTP1 knows; nil for the others. Methods are case-sensitive (RFC 9110 §9.1).
    private static func commonMethod(_ parsed: RequestHead, in buffer: ByteBuffer) -> HTTPMethod? {
        let span = buffer.readableBytesUInt8Span
        let range = parsed.method
        if parsed.isHead { return .HEAD }
        switch range.count {
        case 3:
            if equals(span, range, "GET") { return .GET }
            if equals(span, range, "PUT") { return .PUT }
        case 4:
            if equals(span, range, "POST") { return .POST }
        case 5:
            if equals(span, range, "PATCH") { return .PATCH }
        case 6:
            if equals(span, range, "DELETE") { return .DELETE }
        case 7:
            if equals(span, range, "OPTIONS") { return .OPTIONS }
        default:
            break
        }
        return nil
    }

    private static func equals(_ span: Span<UInt8>, _ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let pointer = name.utf8Start
        for offset in 0..<range.count where span[range.lowerBound + offset] != pointer[offset] { return false }
        return true
    }

    /// As NIOHTTP1's head, with `headers`, for the paths off the hot one that speak in its types.
    package func head(headers: HTTPHeaders = HTTPHeaders()) -> HTTPRequestHead {
        HTTPRequestHead(version: version, method: method, uri: uri, headers: headers)
    }
}
