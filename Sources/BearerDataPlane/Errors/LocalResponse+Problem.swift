import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

extension LocalResponse {
    /// The RFC 9457 problem details document for `error`.
    static func problem(_ error: ProxyError, requestID: String) -> LocalResponse {
        var response = json(
            [
                "type": error.type, "title": error.title, "status": Int(error.status.code), "detail": error.detail,
                "requestId": requestID,
            ], status: error.status, contentType: "application/problem+json")
        for (name, value) in error.extraHeaders { response.headers.add(name: name, value: value) }
        return response
    }

    /// The same answer as a gRPC client reads it (gRPC over HTTP/2, PROTOCOL-HTTP2.md "Trailers-Only"): status 200,
    /// `content-type` `application/grpc`, no body, and `grpc-status` with `grpc-message` — the problem's title and
    /// detail, which names what to run — in the one header section, which an HTTP/2 stream sends with END_STREAM.
    /// A problem+json body would be a framing error to a gRPC client, and its status code a bare UNKNOWN.
    static func grpcProblem(_ error: ProxyError, requestID: String) -> LocalResponse {
        var response = LocalResponse(status: .ok, contentType: "application/grpc", body: ByteBuffer())
        response.headers.add(name: "grpc-status", value: String(error.grpcStatus))
        response.headers.add(
            name: "grpc-message", value: GRPCMessage.encode("\(error.title): \(error.detail) (request \(requestID))"))
        for (name, value) in error.extraHeaders { response.headers.add(name: name, value: value) }
        return response
    }

    /// Whether `contentTypes` (a request's `content-type` values) say it is a gRPC call over HTTP/2: `application/grpc`
    /// or `application/grpc+proto` and the like — not gRPC-Web, whose status goes in the body.
    static func isGRPC(contentTypes: [String]) -> Bool {
        guard contentTypes.count == 1, let type = contentTypes.first?.lowercased() else { return false }
        return type == "application/grpc" || type.hasPrefix("application/grpc+")
            || type.hasPrefix("application/grpc;")
    }
}
