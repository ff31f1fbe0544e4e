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
        /// Injected `.hang`: no answer.
        case hung
        /// Injected `.dropConnection`: the connection was closed.
        case dropped

        var description: String {
            switch self {
            case .issued: return "issued"
            case .rejected(let error, let codes, let status): return "\(status) \(error) \(codes)"
            case .raw(let status): return "raw \(status)"
            case .hung: return "hung"
            case .dropped: return "dropped"
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
    /// The injected failure that answered (or delayed) this request, if any (`Failure.label`).
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
