/// Told about every token request the cache makes — for logs and metrics, never holding on to the token.
public protocol TokenCacheObserver: Sendable {
    func tokenFetched(
        _ request: TokenRequest, outcome: Result<AccessToken, TokenError>, duration: Duration, background: Bool)
}
