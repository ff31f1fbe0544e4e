import NIOCore
import NIOHTTP1

/// A request's line — method, target, version — as the exchange records it; the fields stay in the head's bytes
/// (``ClientRequest``). A value of its own rather than NIOHTTP1's `HTTPRequestHead`, whose storage is a class: one
/// allocation and a retain for every copy, on every request, for fields the data plane never puts there
/// (docs/benchmarks.md).
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
    /// method NIOHTTP1 knows; nil for the others.
    private static func commonMethod(_ parsed: RequestHead, in buffer: ByteBuffer) -> HTTPMethod? {
        let span = buffer.readableBytesUInt8Span
        let range = parsed.method
        if parsed.isHead { return .HEAD }
        switch range.count {
        case 3:
            if KnownMethod.equals(span, range, "GET") { return .GET }
            if KnownMethod.equals(span, range, "PUT") { return .PUT }
        case 4:
            if KnownMethod.equals(span, range, "POST") { return .POST }
        case 5:
            if KnownMethod.equals(span, range, "PATCH") { return .PATCH }
        case 6:
            if KnownMethod.equals(span, range, "DELETE") { return .DELETE }
        case 7:
            if KnownMethod.equals(span, range, "OPTIONS") { return .OPTIONS }
        default:
            break
        }
        return nil
    }

    /// As NIOHTTP1's head, with `headers`, for the paths off the hot one that speak in its types.
    package func head(headers: HTTPHeaders = HTTPHeaders()) -> HTTPRequestHead {
        HTTPRequestHead(version: version, method: method, uri: uri, headers: headers)
    }
}
