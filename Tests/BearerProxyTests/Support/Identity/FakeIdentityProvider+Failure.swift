extension FakeIdentityProvider {
    /// A misbehaviour to inject into token requests: queued one-shot with `enqueue(_:times:forScope:)`, or
    /// persistent with `setPersistentFailure(_:forScope:)`; into the interactive endpoints (`/initiate`,
    /// `/challenge`, `/devicecode`, `/authorize`, `/oidc/revoke`) with `enqueue(_:times:at:)`. Requests still get
    /// recorded.
    enum Failure: Sendable {
        /// Answer with an Entra error (status default: 400, or 401 for `invalid_client`). `description` replaces
        /// the text after `AADSTSnnnn: `; `claims` sets the error's `claims` member.
        case error(
            status: Int? = nil, error: String, codes: [Int], description: String? = nil, suberror: String? = nil,
            claims: String? = nil)
        /// `429 Too Many Requests` with `Retry-After: retryAfter` and an Entra error body
        /// (`temporarily_unavailable`, AADSTS90055).
        case throttle(retryAfter: Int)
        /// `503` `temporarily_unavailable` (AADSTS90033), no `Retry-After`.
        case unavailable
        /// `503` `temporarily_unavailable` with `Retry-After: retryAfter`.
        case unavailableRetryAfter(Int)
        /// Never answer (the connection stays open until the client or `shutdown()` closes it).
        case hang
        /// Answer normally, but only after this long (timed on the event loop, no sleeping).
        case delay(Duration)
        /// Close the connection without answering.
        case dropConnection
        /// Answer with exactly this (e.g. a 200 whose body is not JSON).
        case raw(status: Int, headers: [(String, String)] = [], body: String)

        /// `invalid_grant` 700082 with suberror `bad_token`: the refresh token expired (full sign-in needed).
        static let refreshTokenExpired = Failure.error(error: "invalid_grant", codes: [700082], suberror: "bad_token")
        /// `invalid_grant` 50076 with suberror `basic_action`: MFA required (interactive sign-in).
        static let mfaRequired = Failure.error(error: "invalid_grant", codes: [50076], suberror: "basic_action")
        /// `interaction_required` 50076 with suberror `basic_action`: MFA required, the other spelling.
        static let interactionRequired = Failure.error(
            error: "interaction_required", codes: [50076], suberror: "basic_action")
        /// `invalid_grant` 65001 with suberror `consent_required`.
        static let consentRequired = Failure.error(error: "invalid_grant", codes: [65001], suberror: "consent_required")
        /// `invalid_grant` 50196: client request loop detected.
        static let loopDetected = Failure.error(error: "invalid_grant", codes: [50196])
        /// `interaction_required` 53003: blocked by Conditional Access.
        static let blockedByConditionalAccess = Failure.error(error: "interaction_required", codes: [53003])

        /// A short label for records (`RecordedTokenRequest.injected`).
        var label: String {
            switch self {
            case .error(let status, let error, let codes, _, let suberror, _):
                let status = status.map { " \($0)" } ?? ""
                let suberror = suberror.map { "/\($0)" } ?? ""
                return "error\(status) \(error)\(suberror) \(codes)"
            case .throttle(let retryAfter): return "throttle(retryAfter: \(retryAfter))"
            case .unavailable: return "unavailable"
            case .unavailableRetryAfter(let retryAfter): return "unavailable(retryAfter: \(retryAfter))"
            case .hang: return "hang"
            case .delay(let duration): return "delay(\(duration))"
            case .dropConnection: return "dropConnection"
            case .raw(let status, _, _): return "raw(\(status))"
            }
        }

        /// The Entra error this failure answers with, if it is one.
        var entraError: FakeIdentityError? {
            switch self {
            case .error(let status, let error, let codes, let description, let suberror, let claims):
                return FakeIdentityError(
                    status: status, error: error, codes: codes, message: description, suberror: suberror,
                    claims: claims)
            case .throttle(let retryAfter):
                return FakeIdentityError(
                    status: 429, error: "temporarily_unavailable", codes: [90055], retryAfter: retryAfter)
            case .unavailable:
                return FakeIdentityError(status: 503, error: "temporarily_unavailable", codes: [90033])
            case .unavailableRetryAfter(let retryAfter):
                return FakeIdentityError(
                    status: 503, error: "temporarily_unavailable", codes: [90033], retryAfter: retryAfter)
            case .hang, .delay, .dropConnection, .raw:
                return nil
            }
        }
    }
}
