import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A managed identity endpoint's answer, decoded: the token of a 200, or what to do about anything else.
///
/// Both protocols answer `access_token`, `token_type`, `resource` and `expires_on` (seconds since the epoch, a
/// number or a decimal string); the Instance Metadata Service adds `expires_in` (and sometimes `refresh_in`).
/// Errors are IMDS's OAuth shape (`error`, `error_description`) or App Service's (`statusCode`, `message`).
struct ManagedIdentityAnswer: Sendable {
    /// How long an endpoint that failed without a `Retry-After` blocks the next attempt.
    static let retryAfterSeconds = 5

    /// The endpoint's URL (no query), as messages name it.
    package let endpoint: String
    /// Whether the token is for a user-assigned identity, for the hint of a refusal.
    let userAssigned: Bool

    init(endpoint: String, userAssigned: Bool) {
        self.endpoint = endpoint
        self.userAssigned = userAssigned
    }

    /// The access token in the answer to `request`, sent at `issued`; a ``TokenError`` for any other answer.
    package func token(
        status: Int, headers: HTTPHeaders, body: Data, for request: TokenRequest, at issued: Date
    ) throws(TokenError) -> AccessToken {
        guard status == 200 else { throw failure(status: status, headers: headers, body: body) }
        guard let object = JSONObject.dictionary(body),
            let value = object["access_token"] as? String, !value.isEmpty
        else {
            throw .providerUnavailable(
                reason: "the managed identity endpoint \(endpoint) answered 200 without an access token",
                retryAfterSeconds: Self.retryAfterSeconds)
        }
        let latest = issued.timeIntervalSince1970 + TokenResponse.maximumSeconds
        let expiresOn: Date
        // `expires_in` is relative, so it does not depend on the endpoint's clock agreeing with ours; App Service
        // sends only the absolute `expires_on`.
        if let lifetime = TokenResponse.seconds(object["expires_in"]) {
            expiresOn = issued.addingTimeInterval(lifetime)
        } else if let epoch = TokenResponse.seconds(object["expires_on"], atMost: latest) {
            expiresOn = Date(timeIntervalSince1970: max(epoch, issued.timeIntervalSince1970))
        } else {
            throw .providerUnavailable(
                reason: "the managed identity endpoint \(endpoint) answered a token without expires_on",
                retryAfterSeconds: Self.retryAfterSeconds)
        }
        let lifetime = expiresOn.timeIntervalSince(issued)
        let refreshOn = TokenResponse.seconds(object["refresh_in"]).map { issued.addingTimeInterval(min($0, lifetime)) }
        return AccessToken(
            value: value, scopes: request.scopes, expiresOn: expiresOn, refreshOn: refreshOn, issuedAt: issued)
    }

    /// What an error answer means: throttling, a 5xx, and IMDS's 404 and 410 (its identity service starting or
    /// being upgraded) are retried after `Retry-After`; a 400, 401 or 403 — no such identity, a wrong
    /// header — needs the platform's configuration changed.
    private func failure(status: Int, headers: HTTPHeaders, body: Data) -> TokenError {
        let object = JSONObject.dictionary(body) ?? [:]
        let code = object["error"] as? String
        let message = (object["error_description"] as? String) ?? (object["message"] as? String)
        let said = [code, message.map(Self.firstLine)].compactMap { $0 }.joined(separator: ": ")
        let answer = "HTTP \(status)" + (said.isEmpty ? "" : " \(said)")
        let retryAfter = RetryAfter.seconds(headers.first(name: "retry-after"))
        if status == 429 || status >= 500 || [404, 408, 410].contains(status) {
            return .providerUnavailable(
                reason: "the managed identity endpoint \(endpoint) answered \(answer)",
                retryAfterSeconds: retryAfter ?? Self.retryAfterSeconds)
        }
        let hint: String =
            switch status {
            case 401, 403:
                "; it did not accept the proxy's IDENTITY_HEADER, which must be the one the platform set for this process"
            case 400 where userAssigned:
                "; check that the user-assigned identity is assigned to this resource and that its id is right"
            case 400: "; check that a system-assigned identity is enabled on this resource"
            default: ""
            }
        return .misconfigured(
            reason: "the managed identity endpoint \(endpoint) refused the request (\(answer))\(hint)")
    }

    /// The first line of an endpoint's message, at most 300 characters: enough to say what went wrong.
    private static func firstLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? text
        return line.count > 300 ? String(line.prefix(300)) + "…" : line
    }
}
