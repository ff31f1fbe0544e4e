/// One request to a `FakeIdentityProvider` token endpoint, as recorded when it had fully arrived.
///
/// Secrets are never kept: `parameters` has `client_secret`, `client_assertion`, `refresh_token`, `code`,
/// `password` and `device_code` redacted; the refresh token is known only by its label (`refreshTokenID`).
struct RecordedTokenRequest: Sendable, CustomStringConvertible {
    /// How the client authenticated.
    enum AuthMethod: Sendable, Equatable, CustomStringConvertible {
        /// No client authentication (a public client).
        case none
        /// `client_secret` in the body (`client_secret_post`).
        case post
        /// HTTP Basic (`client_secret_basic`, RFC 6749 §2.3.1).
        case basic
        /// A signed client assertion with this `alg` (`"?"` if the header could not be read).
        case assertion(alg: String)
        /// More than one method at once (rejected, `invalid_request`).
        case conflicting

        var description: String {
            switch self {
            case .none: return "none"
            case .post: return "client_secret_post"
            case .basic: return "client_secret_basic"
            case .assertion(let alg): return "private_key_jwt(\(alg))"
            case .conflicting: return "conflicting"
            }
        }
    }

    /// What the fake answered.
    enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Tokens were issued.
        case issued
        /// An error response (`error`, `error_codes`, status) — a real rejection or an injected one.
        case rejected(error: String, codes: [Int], status: Int)
        /// An injected non-error answer (`.raw`), with its status.
        case raw(status: Int)

        var description: String {
            switch self {
            case .issued: return "issued"
            case .rejected(let error, let codes, let status): return "\(status) \(error) \(codes)"
            case .raw(let status): return "raw \(status)"
            }
        }
    }

    /// 1-based arrival order.
    var sequence: Int
    /// The endpoint path (`/contoso/oauth2/v2.0/token` or `/oidc/token`).
    var path: String
    /// `grant_type` as sent.
    var grantType: String?
    /// The client id: `client_id` from the body, else the HTTP Basic user name.
    var clientID: String?
    /// `scope` exactly as sent (decoded from the form).
    var scope: String?
    /// `scope` split on spaces.
    var scopes: [String]
    /// The client authentication used.
    var authMethod: AuthMethod
    /// `claims` as sent (JSON text), if any.
    var claims: String?
    /// Whether `client_info=1` was sent.
    var clientInfoRequested: Bool
    /// The label of the refresh token presented (`"rt1"`, `"rt2"`, ...; `"unknown"` for one the fake never issued).
    var refreshTokenID: String?
    /// The label of the refresh token issued in the answer, if any.
    var issuedRefreshTokenID: String?
    /// The client assertion check that failed, if an assertion was sent and failed.
    var assertionFailure: FakeIdentityProvider.AssertionCheck?
    /// The injected failure that answered this request, if any (`Failure.label`).
    var injected: String?
    /// Every form parameter (the last value of repeated ones), secrets redacted as `"<redacted>"`.
    var parameters: [String: String]
    /// The request's `content-type`.
    var contentType: String?
    /// What the fake answered.
    var outcome: Outcome

    /// Whether the requested scopes include every space-separated scope in `scope` (order-insensitive).
    func requests(scope: String) -> Bool {
        Set(scope.split(separator: " ").map(String.init)).isSubset(of: Set(self.scopes))
    }

    var description: String {
        var parts = ["#\(sequence)", path, "grant=\(grantType ?? "-")", "client=\(clientID ?? "-")"]
        parts.append("scope=\"\(scope ?? "")\"")
        parts.append("auth=\(authMethod)")
        if let refreshTokenID { parts.append("rt=\(refreshTokenID)") }
        if let issuedRefreshTokenID { parts.append("newRT=\(issuedRefreshTokenID)") }
        if claims != nil { parts.append("claims") }
        if clientInfoRequested { parts.append("client_info") }
        if let assertionFailure { parts.append("assertionFailure=\(assertionFailure.rawValue)") }
        if let injected { parts.append("injected=\(injected)") }
        parts.append("→ \(outcome)")
        return parts.joined(separator: " ")
    }

    /// Form parameters whose values are never recorded.
    static let secretParameters: Set<String> = [
        "client_secret", "client_assertion", "refresh_token", "code", "password", "device_code", "code_verifier",
        "continuation_token", "oob",
    ]
}

/// One native-authentication request to a `FakeIdentityProvider` (`/initiate`, `/challenge`, or the token
/// endpoint with `grant_type=password` or `oob`), as it arrived and what the fake answered.
///
/// The form is kept as sent (continuation tokens and one-time codes included, so tests can check the client sent
/// the latest token) except `password`, which is `"<redacted>"`.
struct RecordedNativeRequest: Sendable, CustomStringConvertible {
    /// Which native-authentication endpoint.
    enum Endpoint: String, Sendable, Equatable {
        case initiate
        case challenge
        case token
    }

    /// 1-based arrival order among native-authentication requests.
    var sequence: Int
    /// Which endpoint.
    var endpoint: Endpoint
    /// Every form parameter (the last value of repeated ones); `password` redacted.
    var parameters: [String: String]
    /// The HTTP status answered; nil until the answer is known.
    var status: Int?
    /// The `error` answered, if any.
    var error: String?
    /// The `suberror` answered, if any.
    var suberror: String?
    /// The `challenge_type` answered (`redirect`, `password`, `oob`), if any.
    var challengeType: String?
    /// The `continuation_token` answered (in a success or an error body), if any.
    var issuedContinuationToken: String?

    /// A record of a request not yet answered (`password` redacted).
    init(sequence: Int, endpoint: Endpoint, parameters: [String: String]) {
        self.sequence = sequence
        self.endpoint = endpoint
        self.parameters = parameters
        if self.parameters["password"] != nil { self.parameters["password"] = "<redacted>" }
    }

    /// Notes the fake's own answer.
    mutating func settle(_ result: Result<[String: Any], FakeIdentityError>) {
        switch result {
        case .success(let body):
            self.status = 200
            self.challengeType = body["challenge_type"] as? String
            self.issuedContinuationToken = body["continuation_token"] as? String
        case .failure(let error):
            self.status = error.status
            self.error = error.error
            self.suberror = error.suberror
            self.issuedContinuationToken = error.continuationToken
        }
    }

    /// Notes an injected failure's answer.
    mutating func settle(injected failure: FakeIdentityProvider.Failure) {
        switch failure {
        case .raw(let status, _, _): self.status = status
        case .error, .throttle, .unavailable, .unavailableRetryAfter:
            self.status = failure.entraError?.status
            self.error = failure.entraError?.error
            self.suberror = failure.entraError?.suberror
        }
    }

    var description: String {
        var parts = ["#\(sequence)", endpoint.rawValue]
        if let grant = parameters["grant_type"] { parts.append("grant=\(grant)") }
        if let challenge = parameters["challenge_type"] { parts.append("challenge_type=\"\(challenge)\"") }
        parts.append("→ \(status.map(String.init) ?? "no answer")")
        if let error { parts.append(error + (suberror.map { "/\($0)" } ?? "")) }
        if let challengeType { parts.append("challenge_type=\(challengeType)") }
        return parts.joined(separator: " ")
    }
}

/// One revocation request (`POST /oidc/revoke`, RFC 7009) to a `FakeIdentityProvider`.
struct RecordedRevocation: Sendable, Equatable {
    /// `token_type_hint` as sent, if any.
    var tokenTypeHint: String?
    /// `client_id` as sent, if any.
    var clientID: String?
    /// The label of the refresh token revoked (`"rt1"`, ...); nil if the token was not a refresh token the fake
    /// issued (an access token, or an unknown value: RFC 7009 answers 200 all the same).
    var refreshTokenID: String?
    /// The HTTP status answered (200; 400 for a missing `token` or a refresh token of another client).
    var status: Int
}
