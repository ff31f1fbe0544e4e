import Foundation

/// An error answer from the fake's token endpoint, in Microsoft Entra's JSON shape:
///
///     HTTP/1.1 400
///     {"error":"invalid_grant","error_description":"AADSTS700082: The refresh token has expired ...\r\nTrace ID: ...
///      \r\nCorrelation ID: ...\r\nTimestamp: ...","error_codes":[700082],"timestamp":"2025-01-01 12:00:00Z",
///      "trace_id":"...","correlation_id":"...","error_uri":"<base>/error?code=700082","suberror":"bad_token"}
///
/// `suberror`, `claims` and `continuation_token` (native authentication) appear only when set; a `retryAfter` adds
/// a `Retry-After` header.
struct FakeIdentityError: Error, Sendable, Equatable {
    /// The HTTP status (400; 401 for `invalid_client`; 429 throttled; 503 unavailable).
    var status: Int
    /// The OAuth `error` value (`invalid_grant`, `invalid_client`, ...).
    var error: String
    /// `error_codes` (the AADSTS numbers; the first one also prefixes the description).
    var codes: [Int]
    /// The description's text after `AADSTSnnnn: `.
    var message: String
    /// `suberror`, if any (`bad_token`, `consent_required`, ...).
    var suberror: String?
    /// `claims`, if any (a claims challenge, JSON text).
    var claims: String?
    /// `Retry-After` seconds, if any.
    var retryAfter: Int?
    /// `continuation_token`, if any (native authentication: the token to go on with, e.g. after `mfa_required`).
    var continuationToken: String?

    init(
        status: Int? = nil, error: String, codes: [Int], message: String? = nil, suberror: String? = nil,
        claims: String? = nil, retryAfter: Int? = nil, continuationToken: String? = nil
    ) {
        self.status = status ?? (error == "invalid_client" ? 401 : 400)
        self.error = error
        self.codes = codes
        self.message =
            message ?? codes.first.flatMap { Self.knownMessages[$0] } ?? "The fake identity provider says \(error)."
        self.suberror = suberror
        self.claims = claims
        self.retryAfter = retryAfter
        self.continuationToken = continuationToken
    }

    /// The JSON response (`correlationID` echoes the client's `client-request-id` when it sent one).
    func response(baseURL: String, correlationID: String?, now: Date = Date()) -> FakeIdentityResponse {
        let traceID = UUID().uuidString.lowercased()
        let correlationID = correlationID ?? UUID().uuidString.lowercased()
        let timestamp = Self.timestamp(now)
        let prefix = self.codes.first.map { "AADSTS\($0): " } ?? ""
        var object: [String: Any] = [
            "error": self.error,
            "error_description":
                "\(prefix)\(self.message)\r\nTrace ID: \(traceID)\r\nCorrelation ID: \(correlationID)\r\nTimestamp: \(timestamp)",
            "error_codes": self.codes,
            "timestamp": timestamp,
            "trace_id": traceID,
            "correlation_id": correlationID,
            "error_uri": "\(baseURL)/error?code=\(self.codes.first ?? 0)",
        ]
        if let suberror = self.suberror { object["suberror"] = suberror }
        if let claims = self.claims { object["claims"] = claims }
        if let continuationToken = self.continuationToken { object["continuation_token"] = continuationToken }
        var headers: [(String, String)] = [("client-request-id", correlationID), ("x-ms-request-id", traceID)]
        if let retryAfter = self.retryAfter { headers.append(("retry-after", "\(retryAfter)")) }
        return .json(status: self.status, object, headers: headers)
    }

    /// Entra's timestamp format: `2025-01-01 12:00:00Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        return formatter.string(from: date)
    }

    /// Descriptions for the codes the fake uses (after Microsoft's error reference; wording shortened).
    static let knownMessages: [Int: String] = [
        28000: "Provided value for the input parameter scope is not valid because it contains more than one resource.",
        28003: "Provided value for the input parameter scope cannot be empty when requesting an access token.",
        50012: "Client assertion audience claim does not match Realm issuer.",
        50034: "The user account does not exist in this directory.",
        50027: "Invalid JWT token.",
        50076: "Due to a configuration change made by your administrator, you must use multi-factor authentication.",
        50079:
            "Due to a configuration change made by your administrator, you must enroll in multi-factor authentication.",
        50126: "Error validating credentials due to invalid username or password.",
        50142: "Password change is required due to a conditional access policy.",
        50181: "The one-time code is not valid.",
        50196: "The server terminated an operation because it encountered a client request loop.",
        53003: "Access has been blocked by Conditional Access policies.",
        54005: "OAuth2 Authorization code was already redeemed, please retry with a new valid code.",
        55200: "The continuation token is not valid.",
        65001: "The user or administrator has not consented to use the application.",
        65004: "User declined to consent to access the app.",
        70000: "The provided grant is invalid or malformed.",
        70003: "The app requested an unsupported grant type.",
        70008: "The provided authorization code or refresh token has expired due to inactivity.",
        70011: "The provided value for the input parameter 'scope' is not valid.",
        70016: "OAuth 2.0 device flow error. Authorization is pending. Continue polling.",
        70018: "Invalid verification code. The device code is unknown or was already redeemed.",
        70019: "Verification code expired.",
        90033: "A transient error has occurred. Please try again.",
        90055: "There are too many incoming requests (throttled). Retry after the interval in Retry-After.",
        500112: "The reply address does not match the reply address provided when requesting the authorization code.",
        500133: "Assertion is not within its valid time range.",
        501481: "The Code_Verifier does not match the code_challenge supplied in the authorization request.",
        552003: "The continuation token has expired.",
        700016: "Application with the given identifier was not found in the directory.",
        700021: "Client assertion application identifier doesn't match 'client_id' parameter.",
        700025: "Client is public so neither 'client_assertion' nor 'client_secret' should be presented.",
        700027: "Client assertion failed signature validation.",
        700082: "The refresh token has expired due to inactivity.",
        900144: "The request body must contain the following parameter.",
        901007: "The challenge_type list parameter does not include the 'redirect' type.",
        900561: "The endpoint only accepts POST requests.",
        5002738: "Invalid JWT token: the signature algorithm is not supported.",
        7000215: "Invalid client secret provided.",
        7000218: "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
        9002313: "Invalid request. Request is malformed or invalid.",
    ]

    /// `invalid_request` (400).
    static func invalidRequest(_ code: Int, _ message: String? = nil) -> Self {
        Self(error: "invalid_request", codes: [code], message: message)
    }

    /// `invalid_client` (401).
    static func invalidClient(_ code: Int, _ message: String? = nil) -> Self {
        Self(error: "invalid_client", codes: [code], message: message)
    }

    /// `invalid_grant` (400).
    static func invalidGrant(_ code: Int, _ message: String? = nil, suberror: String? = nil) -> Self {
        Self(error: "invalid_grant", codes: [code], message: message, suberror: suberror)
    }

    /// `invalid_scope` 70011 (400).
    static func invalidScope(_ message: String? = nil) -> Self {
        Self(error: "invalid_scope", codes: [70011], message: message)
    }

    /// A required parameter is missing: `invalid_request` 900144.
    static func missingParameter(_ name: String) -> Self {
        .invalidRequest(900144, "The request body must contain the following parameter: '\(name)'.")
    }
}
