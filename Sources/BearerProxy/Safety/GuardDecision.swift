import NIOHTTP1

/// What the request guard decided about a request head.
enum GuardDecision {
    /// Go on with `target` (an absolute-form target has become origin-form); `corsOrigin` is the allowed browser
    /// origin to answer with CORS headers, if the request came from one.
    case allow(target: RequestTarget, corsOrigin: String?)
    /// A CORS preflight from an allowed origin: answered by the proxy itself, never forwarded, never with a token.
    case preflight(origin: String, requestedMethod: String, requestedHeaders: String?)
    /// Refused before anything else happens.
    case refuse(ProxyError)
}
