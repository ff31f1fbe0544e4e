import NIOHTTP1

/// What a proxied exchange sends upstream: the route, the generation it began with, and the request head rewritten
/// with the current token. Data only; ``ExchangeStateMachine`` decides when it is sent (again).
final class UpstreamLeg {
    let binding: RouteBinding
    /// The configuration the exchange began with: a replay connects, and gets its token, with this one (SPEC §9).
    let proxy: ProxyContext
    /// What the upstream request is made of, kept for a replay with a new token: the raw path after the prefix
    /// and the raw query.
    let remainder: Substring
    let query: Substring?
    /// The rewritten request head; set once the token is known.
    private(set) var head: HTTPRequestHead?
    /// The bearer token sent with the request, to drop exactly that one if the upstream rejects it.
    private(set) var token: String?

    init(binding: RouteBinding, proxy: ProxyContext, remainder: Substring, query: Substring?) {
        self.binding = binding
        self.proxy = proxy
        self.remainder = remainder
        self.query = query
    }

    var origin: UpstreamOrigin { binding.origin }

    /// Rewrites `exchange`'s request for the upstream with `token` (SPEC §8).
    func prepare(_ exchange: Exchange, token: AccessToken?, clientAddress: String?, webSocket: Bool) {
        self.token = token?.value
        head = Forwarding.upstreamRequest(
            client: exchange.request, binding: binding, remainder: remainder, query: query,
            authorization: token?.authorizationHeader, requestID: exchange.id, clientAddress: clientAddress,
            webSocket: webSocket)
    }
}
