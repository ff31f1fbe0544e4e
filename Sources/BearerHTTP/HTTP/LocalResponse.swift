import BearerJSON
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A complete response the proxy produces itself: an error, or one of its `/-/` endpoints.
package struct LocalResponse: Sendable, Equatable {
    /// Fixed at creation: a problem's status and its body's `status` member are made together (RFC 9457 §3.1.4).
    package let status: HTTPResponseStatus
    package var headers: HTTPHeaders
    package var body: ByteBuffer

    package init(
        status: HTTPResponseStatus, contentType: String, body: ByteBuffer, extraHeaders: [(String, String)] = []
    ) {
        self.status = status
        self.headers = HTTPHeaders()
        self.headers.add(name: "content-type", value: contentType)
        self.headers.add(name: "content-length", value: String(body.readableBytes))
        self.headers.add(name: "cache-control", value: "no-store")
        for (name, value) in extraHeaders { self.headers.add(name: name, value: value) }
        self.body = body
    }

    /// JSON from an untyped tree (``JSONObject``), pretty-printed so `curl` output reads well.
    package static func json(_ object: Any, status: HTTPResponseStatus = .ok, contentType: String = "application/json")
        -> LocalResponse
    {
        var buffer = ByteBuffer(bytes: JSONObject.data(object, pretty: true) ?? Data())
        buffer.writeStaticString("\n")
        return LocalResponse(status: status, contentType: contentType, body: buffer)
    }
}
