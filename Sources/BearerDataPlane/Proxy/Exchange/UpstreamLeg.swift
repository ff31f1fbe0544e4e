import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// What a proxied exchange sends upstream: the route, the generation it began with, and the request head rewritten
/// with the current token. Data only; ``ExchangeStateMachine`` decides when it is sent (again).
package final class UpstreamLeg {
    package let binding: RouteBinding
    /// The configuration the exchange began with: a replay connects, and gets its token, with this one (SPEC §9).
    package let proxy: ProxyContext
    /// What the upstream request is made of, kept for a replay with a new token: the raw path after the prefix
    /// and the raw query.
    package let remainder: Substring
    package let query: Substring?
    /// The rewritten request head; set once the token is known.
    package private(set) var head: UpstreamRequestHead?
    /// The bearer token sent with the request, to drop exactly that one if the upstream rejects it.
    package private(set) var token: String?
    /// The scopes that token was granted, for the step-up a `403` `insufficient_scope` asks for: a discovered
    /// route's only (nil for the others, which pass their `403` through — and pay no retain for it per request).
    package private(set) var tokenScopes: Set<String>?

    package init(
        binding: RouteBinding, proxy: ProxyContext, remainder: Substring, query: Substring?
    ) {
        self.binding = binding
        self.proxy = proxy
        self.remainder = remainder
        self.query = query
    }

    package var origin: UpstreamOrigin { binding.origin }

    /// Rewrites `exchange`'s request, `client` (its head as the codec read it), for the upstream with `token` (SPEC
    /// §8), into the connection's `buffer`. The head is passed in, not kept here: a copy of it cost its retains and
    /// releases on every request (#24 session 19).
    package func prepare(
        _ exchange: Exchange, client: ClientRequest, token: AccessToken?, clientAddress: String?, webSocket: Bool,
        into buffer: inout ReusedHeadBuffer
    ) {
        self.token = token?.value
        if binding.discoveredTokens != nil { tokenScopes = token?.grantedScopes ?? [] }
        head = buffer.writing { out in
            Forwarding.upstreamHead(
                client: client, binding: binding, remainder: remainder, query: query,
                authorization: token?.authorizationHeader, requestID: exchange.id, clientAddress: clientAddress,
                webSocket: webSocket, into: &out)
        }
    }
}
