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

/// An error answer from a token endpoint (RFC 6749 §5.2 plus Microsoft's `error_codes`, `suberror`, `claims`), and
/// what the proxy should do about it — branching on `error` and the codes, never on the description
/// (protocols.md §2).
struct TokenEndpointFailure: Error, Sendable, Equatable {
    package var status: Int
    package var error: String
    /// The first sentence of `error_description` (Microsoft's start with `AADSTSnnnn:`); never a secret.
    var summary: String?
    var codes: [Int]
    var suberror: String?
    var retryAfter: Int?
    /// Native authentication's errors may carry a newer continuation token to continue the same sign-in with.
    var continuationToken: String?
    /// A claims challenge (Entra's `claims`, a JSON text): what a new token of the user's must satisfy.
    var claims: String?

    init(status: Int, json data: Data, retryAfter: Int?) {
        let object = JSONObject.dictionary(data) ?? [:]
        self.status = status
        error = object["error"] as? String ?? "http_\(status)"
        summary = (object["error_description"] as? String).map(Self.firstSentence)
        codes = (object["error_codes"] as? [Any] ?? []).compactMap { JSONObject.integer($0) }
        suberror = object["suberror"] as? String
        self.retryAfter = retryAfter
        continuationToken = object["continuation_token"] as? String
        claims = object["claims"] as? String
    }

    init(status: Int, error: String, summary: String? = nil, codes: [Int] = [], retryAfter: Int? = nil) {
        self.status = status
        self.error = error
        self.summary = summary
        self.codes = codes
        suberror = nil
        self.retryAfter = retryAfter
    }

    /// The one-line reason shown to people: `invalid_grant (AADSTS700082: The refresh token has expired …)`.
    package var reason: String {
        summary.map { "\(error) (\($0))" } ?? error
    }

    /// The action for this answer (protocols.md §2 table).
    var tokenError: TokenError {
        if status == 429 {
            return .providerUnavailable(reason: "throttled: \(reason)", retryAfterSeconds: retryAfter ?? 60)
        }
        if status >= 500 || error == "temporarily_unavailable" {
            return .providerUnavailable(reason: reason, retryAfterSeconds: retryAfter ?? 5)
        }
        switch error {
        case "invalid_grant", "interaction_required", "consent_required", "login_required", "expired_token":
            // 50196 LoopDetected is invalid_grant too, but it means "stop asking", not "sign in again".
            if codes.contains(50196) {
                return .providerUnavailable(reason: reason, retryAfterSeconds: retryAfter ?? 60)
            }
            // AADSTS65001: signed in, but nobody consented to this API — signing in again alone does not help.
            if error == "consent_required" || suberror == "consent_required" || codes.contains(65001) {
                return .signInRequired(
                    reason: "No consent for these scopes (\(reason)): grant admin consent for the API permission in "
                        + "the app registration, or sign in with the browser flow and \"prompt\": \"consent\".")
            }
            return .signInRequired(reason: reason)
        default:
            // invalid_client, invalid_scope, invalid_request, unauthorized_client, unsupported_grant_type, …:
            // the configuration or the app registration must change; asking again will not help.
            return .misconfigured(reason: reason)
        }
    }

    /// The action for this answer to an exchange of a caller's token (an on-behalf-of route): the caller's own token
    /// refused is the caller's 401, with the server's claims challenge; missing consent the caller's 403; the rest as
    /// for any token request. RFC 8693 §2.2.2 answers an unacceptable subject or actor token with `invalid_request`.
    func exchangeError(grant: OnBehalfOfSettings.Grant) -> TokenError {
        if status == 429 || status >= 500 || error == "temporarily_unavailable" || codes.contains(50196) {
            return tokenError
        }
        if error == "consent_required" || suberror == "consent_required" || codes.contains(65001) {
            return .consentRequired(reason: reason)
        }
        switch error {
        case "invalid_grant", "interaction_required", "login_required", "expired_token":
            return .subjectRefused(reason: reason, claims: claims)
        case "invalid_request" where grant == .tokenExchange:
            return .subjectRefused(reason: reason, claims: claims)
        default:
            return .misconfigured(reason: reason)
        }
    }

    private static func firstSentence(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? text
        if let stop = line.firstRange(of: ". ") { return String(line[..<stop.lowerBound]) + "." }
        return line.count > 300 ? String(line.prefix(300)) + "…" : line
    }
}
