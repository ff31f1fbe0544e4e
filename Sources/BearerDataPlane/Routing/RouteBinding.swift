import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// A route as the data plane uses it on every request, built once per configuration: one reference for a request
/// to hold instead of a copy of the route's dozen fields, and what every request would otherwise work out again
/// (its upstream origin with its TLS context, its response timeout, the key of its token).
final class RouteBinding: Sendable {
    package let route: Route
    let origin: UpstreamOrigin
    let responseTimeout: TimeAmount
    /// The generation's limit for connecting to the upstream (SPEC §9: a replay connects under the one it began
    /// with, which is this binding's).
    let connectTimeout: TimeAmount
    /// The route's own idle limit for WebSocket tunnels, if it sets one.
    let tunnelIdleTimeout: TimeAmount?
    package let tokenKey: ScopeSet?
    /// Whether the route sends a token (``tokenKey`` is set): asked on every request and response head, where
    /// copying the key out to compare it with nil costs a retain and a release of its strings. Stored, though
    /// derivable: as a computed `tokenKey != nil` it still copied the key, 4 retains a request (bench/counts.sh).
    let sendsToken: Bool
    /// `"auth": "discover"` (SPEC §6.3): answered by ``DiscoveredRouteGate`` when it has no token cache of its own.
    let isDiscovered: Bool
    /// A discovered route's own token cache (never the account's), when a sign-in can be stored.
    package let discoveredTokens: TokenCache?
    /// `"auth": "on-behalf-of"`: the request's own bearer token is the subject of an exchange, and the token sent is
    /// from that caller's cache in ``subjectTokens`` — never the account's, even when there is none.
    let isOnBehalfOf: Bool
    /// An on-behalf-of route's callers' caches (nil: none was given, and its requests are refused).
    package let subjectTokens: SubjectTokenCaches?
    /// A discovered route whose authorization server is the account's own (SPEC §6.3): its token is the account's, so
    /// its upstream's `403` `insufficient_scope` passes through as a bearer route's does (SPEC §7).
    package let usesAccount: Bool
    /// The route as ``TokenVerdict`` judges its upstream's answers.
    let tokenRoute: TokenVerdict.Route
    /// The headers a request must carry (`requireHeader`, global and the route's), checked before the token.
    package let requiredHeaders: [RequiredHeaderCheck]
    /// The lowercased names of client fields the route removes (`headers.remove`), checked as they are copied.
    let removedHeaders: [String]
    /// The lowercased names of the fields the route sets (`headers.set`): the client's are dropped as they are
    /// copied, and the route's value written after them.
    let replacedHeaders: [String]
    /// The route's own rules for the forwarded head, in the order ``Forwarding`` applies them.
    let headerRules: [RouteHeaderRule]
    /// Whether the route removes or replaces any client field (``removedHeaders``, ``replacedHeaders``).
    let editsHeaders: Bool
    /// How the route presents its token (`tokenType`, RFC 9449 §7.1): which tokens its cache hands it.
    let tokenType: TokenTypePreference
    /// What its DPoP proofs need, when it may present a DPoP-bound token: a route that sends a token and whose
    /// `tokenType` is not `bearer` — the account's, or a discovered route with a sign-in (and a DPoP key) of its own.
    let proofs: UpstreamProofs?

    /// `nonce` gives the nonces of an upstream origin (``UpstreamProofs/origin(of:)``), the same ones to every route
    /// that goes there, in this generation and the next (``UpstreamNonceStore``).
    init(
        _ route: Route, timeouts: ProxyTimeouts, discoveredTokens: TokenCache? = nil,
        subjectTokens: SubjectTokenCaches? = nil, nonce: (_ origin: String) -> UpstreamNonce = { _ in UpstreamNonce() },
        tls: (_ caFile: String?, _ version: UpstreamProtocol) throws -> UpstreamTLS
    ) rethrows {
        self.route = route
        origin = try UpstreamOrigin(route, tls: tls)
        if case .discover(let settings) = route.auth {
            isDiscovered = true
            usesAccount = settings.usesAccount
        } else {
            isDiscovered = false
            usesAccount = false
        }
        self.discoveredTokens = isDiscovered ? discoveredTokens : nil
        if case .onBehalfOf = route.auth { isOnBehalfOf = true } else { isOnBehalfOf = false }
        self.subjectTokens = isOnBehalfOf ? subjectTokens : nil
        if case .onBehalfOf(let settings) = route.auth {
            // The key in each caller's own cache.
            tokenKey = settings.scopes
        } else {
            tokenKey = self.discoveredTokens == nil ? route.auth.tokenKey : RouteAuth.discoveredTokenKey
        }
        responseTimeout = route.timeout.map(Self.amount) ?? timeouts.responseHead
        connectTimeout = timeouts.connect
        tunnelIdleTimeout = route.idleTimeout.map(Self.amount)
        requiredHeaders = route.requiredHeaders.map(RequiredHeaderCheck.init)
        removedHeaders = route.headers.remove
        replacedHeaders = route.headers.set.map { $0.name.lowercased() }
        headerRules = RouteHeaderRule.compile(route)
        sendsToken = tokenKey != nil
        tokenRoute =
            switch (sendsToken, self.discoveredTokens != nil, route.auth) {
            case (false, _, _): .noToken
            case (true, true, .discover(let settings)):
                .discovered(usesAccount: settings.usesAccount, stepsUp: settings.stepsUp)
            case (true, _, _): .bearer
            }
        editsHeaders = !removedHeaders.isEmpty || !replacedHeaders.isEmpty
        // A discovered route on the account's own authorization server hands on the account's tokens as bearer
        // tokens; one with a sign-in of its own presents them as its `tokenType` says, proving its own key.
        tokenType = self.discoveredTokens == nil || !usesAccount ? route.tokenType : .bearer
        proofs =
            sendsToken && tokenType != .bearer
            ? UpstreamProofs(upstream: route.upstream, nonce: nonce(UpstreamProofs.origin(of: route.upstream))) : nil
    }

    /// Whether the client field named `span[name]` is one the route removes or replaces, so it is not copied.
    func edits(_ span: Span<UInt8>, _ name: Range<Int>) -> Bool {
        removedHeaders.contains { FieldName.equals(span, name, lowercased: $0) }
            || replacedHeaders.contains { FieldName.equals(span, name, lowercased: $0) }
    }

    /// Where this route's token comes from: its own cache for a discovered route, else the account's. Never asked for
    /// an on-behalf-of route, whose token comes from its caller's cache (``Exchange/tokens``).
    package func tokens(_ proxy: ProxyContext) -> TokenCache { discoveredTokens ?? proxy.tokens }

    private static func amount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
