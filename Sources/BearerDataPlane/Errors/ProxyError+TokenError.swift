import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Kept in the data plane rather than beside ``ProxyError``: `HTTP/` knows no token types, and this is where the
/// proxy decides how a token failure is answered.
extension ProxyError {
    /// Maps a token failure to the answer SPEC §7 asks for: 401 when a person must sign in, 503 otherwise. The
    /// reason names its subject — the identity provider, or the client's own credential (an assertion file
    /// that is missing) — so the wording around it names none.
    init(_ error: TokenError) {
        switch error {
        case .signInRequired(let reason): self = .signInRequired(detail: reason.isEmpty ? "Not signed in." : reason)
        case .providerUnavailable(let reason, let retryAfter):
            self = .tokenUnavailable(
                detail: "No access token could be obtained now: \(reason).", retryAfterSeconds: retryAfter)
        case .misconfigured(let reason):
            self = .tokenMisconfigured(detail: "The sign-in configuration was refused: \(reason).")
        case .subjectRefused(let reason, let claims):
            // Base64, as Entra writes a claims challenge into WWW-Authenticate: no quote or backslash can reach the
            // header from the server's JSON.
            self = .subjectTokenRefused(detail: reason, claims: claims.map { Data($0.utf8).base64EncodedString() })
        case .consentRequired(let reason):
            self = .consentRequired(detail: reason)
        }
    }

    /// The same for a discovered route: a sign-in is needed for that route (`login ROUTE`), not for the account.
    init(_ error: TokenError, discoveredRoute route: String) {
        if case .signInRequired(let reason) = error {
            self = .discoveredSignInRequired(route: route, reason: reason.isEmpty ? nil : reason)
        } else {
            self.init(error)
        }
    }
}
