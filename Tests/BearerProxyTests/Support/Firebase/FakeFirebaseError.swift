import Foundation

/// An error answer of the fake Identity Toolkit / securetoken API, in Google's envelope (as the Auth emulator
/// writes it):
///
///     HTTP/1.1 400
///     {"error":{"code":400,"message":"EMAIL_NOT_FOUND",
///               "errors":[{"message":"EMAIL_NOT_FOUND","domain":"global","reason":"invalid"}]}}
///
/// `message` is a code, or `CODE : detail` (clients split at the first colon). Statuses other than 400 add
/// `"status"` (`UNAUTHENTICATED` 401, `PERMISSION_DENIED` 403, `NOT_FOUND` 404, `RESOURCE_EXHAUSTED` 429,
/// `NOT_IMPLEMENTED` 501, `UNAVAILABLE` 503, ...). A wrong API key answers production's shape instead: 400
/// `API key not valid. Please pass a valid API key.`, status `INVALID_ARGUMENT`, reason `badRequest` and a
/// `details` `ErrorInfo` with reason `API_KEY_INVALID`.
struct FakeFirebaseError: Error, Sendable, Equatable {
    var status: Int
    /// `CODE` or `CODE : detail`.
    var message: String
    /// `Retry-After` seconds, if any.
    var retryAfter: Int?
    /// Set for the wrong-API-key answer: the service named in its `ErrorInfo`.
    var invalidKeyService: String?

    /// The code: `message` up to the first ` :` (or all of it).
    var code: String {
        Self.code(of: self.message)
    }

    /// The leading code of an error message (`INVALID_IDP_RESPONSE : detail` → `INVALID_IDP_RESPONSE`).
    static func code(of message: String) -> String {
        String(message.prefix { $0 != ":" }).trimmingCharacters(in: .whitespaces)
    }

    /// A 400 with `code`, and ` : detail` when given.
    static func bad(_ code: String, _ detail: String? = nil) -> Self {
        Self(status: 400, message: detail.map { "\(code) : \($0)" } ?? code)
    }

    /// 403 `PERMISSION_DENIED`: no API key at all (the emulator's wording).
    static let missingAPIKey = Self(status: 403, message: "The request is missing a valid API key.")

    /// 400 `INVALID_ARGUMENT` / `API_KEY_INVALID`: a key that is not the project's.
    static func invalidAPIKey(service: String) -> Self {
        Self(status: 400, message: "API key not valid. Please pass a valid API key.", invalidKeyService: service)
    }

    /// The response.
    func response() -> FakeFirebaseResponse {
        let isInvalidKey = self.invalidKeyService != nil
        var error: [String: Any] = [
            "code": self.status,
            "message": self.message,
            "errors": [
                ["message": self.message, "domain": "global", "reason": isInvalidKey ? "badRequest" : self.reason]
            ],
        ]
        if isInvalidKey {
            error["status"] = "INVALID_ARGUMENT"
            error["details"] = [
                [
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com", "metadata": ["service": self.invalidKeyService ?? ""],
                ]
            ]
        } else if let status = self.statusText {
            error["status"] = status
        }
        let headers = self.retryAfter.map { [("retry-after", "\($0)")] } ?? []
        return .json(status: self.status, ["error": error], headers: headers)
    }

    /// `errors[0].reason`.
    private var reason: String {
        switch self.status {
        case 401: return "authError"
        case 403: return "forbidden"
        case 404: return "notFound"
        case 429: return "rateLimitExceeded"
        case 501: return "unimplemented"
        case 500, 502, 503, 504: return "backendError"
        default: return "invalid"
        }
    }

    /// The envelope's `status`, nil for a plain 400.
    private var statusText: String? {
        switch self.status {
        case 400: return nil
        case 401: return "UNAUTHENTICATED"
        case 403: return "PERMISSION_DENIED"
        case 404: return "NOT_FOUND"
        case 429: return "RESOURCE_EXHAUSTED"
        case 501: return "NOT_IMPLEMENTED"
        case 503: return "UNAVAILABLE"
        case 504: return "DEADLINE_EXCEEDED"
        default: return "INTERNAL"
        }
    }
}
