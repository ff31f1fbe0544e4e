/// Why no token could be had. The data plane maps each case to a status in ``ProxyError``; SPEC §7 requires that
/// the proxy answers these itself and never forwards a request without a token.
public enum TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A person has to sign in (not signed in, refresh token expired or revoked) — 401.
    case signInRequired(reason: String)
    /// The identity provider is unavailable or throttling us — 503 with `Retry-After`.
    case providerUnavailable(reason: String, retryAfterSeconds: Int)
    /// The identity provider refused the configuration itself (bad client secret, unknown scope) — 500: retrying
    /// cannot help until `routes.json` or the app registration changes.
    case misconfigured(reason: String)

    public var description: String {
        switch self {
        case .signInRequired(let reason): "sign-in required: \(reason)"
        case .providerUnavailable(let reason, let retryAfter):
            "identity provider unavailable (\(reason)); retry in \(retryAfter) s"
        case .misconfigured(let reason): "configuration rejected by the identity provider: \(reason)"
        }
    }
}
