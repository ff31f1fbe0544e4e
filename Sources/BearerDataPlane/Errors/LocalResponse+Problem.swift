import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

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
}
