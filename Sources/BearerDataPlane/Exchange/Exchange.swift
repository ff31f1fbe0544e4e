import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Crypto
import NIOCore
import NIOHTTP1

/// What one exchange is about — its request, its route, the generation it holds, the head it sends upstream — and
/// what its access-log line and metrics report. Data only: its lifecycle is ``ExchangeStateMachine``'s, which decides
/// when the head is sent (again). Confined to the connection's event loop.
///
/// One object a request: the route's side (once a separate `UpstreamLeg`) lives here too, which saved an allocation
/// and the retains of its references on every proxied request (bench/counts.sh).
final class Exchange {
    let id: String
    /// The request line (method, target, version); its fields are ``received``'s.
    package let request: RequestLine
    /// The request as the codec read it: nil for an answer to a request never parsed.
    let received: ClientRequest?
    /// Whether the client sent `Expect: 100-continue` (RFC 9110 §10.1.1) and so may wait before sending its body.
    let expectsContinue: Bool
    /// The generation in force when the request arrived; the exchange uses it until it ends (SPEC §9), and counts
    /// against it until then (nil when nothing was installed yet, or for an answer to a request never parsed).
    package let proxy: ProxyContext?
    /// The request target as the guard accepted it (absolute-form already reduced to origin-form).
    package var target: RequestTarget?
    /// The allowed browser origin this request came from, answered with CORS headers.
    var corsOrigin: String?
    /// The route a proxied request goes to (``route(to:remainder:query:)``); nil for every other exchange.
    private(set) var binding: RouteBinding?
    /// What the upstream request is made of, kept for a replay with a new token: the raw path after the prefix and
    /// the raw query.
    private(set) var remainder: Substring = ""
    package private(set) var query: Substring?
    /// The rewritten request head; set once the token is known (``prepare(client:token:clientAddress:webSocket:into:)``).
    private(set) var upstreamHead: UpstreamRequestHead?
    /// Whether the request head is rewritten for the upstream (asked before every connect): read here, where the
    /// optional's tag is looked at in place, rather than by copying the head out.
    var isPrepared: Bool { upstreamHead != nil }
    /// The token sent with the request, to drop exactly that one if the upstream rejects it, or to send again with a
    /// new DPoP proof.
    package private(set) var sentToken: AccessToken?
    package var token: String? { sentToken?.value }
    /// Whether the request carries a DPoP proof (RFC 9449 §7): its answer's `DPoP-Nonce` and `DPoP` challenges count.
    private(set) var sentProof = false
    /// The scopes that token was granted, for the step-up a `403` `insufficient_scope` asks for: a discovered
    /// route's only (nil for the others, which pass their `403` through — and pay no retain for it per request).
    private(set) var tokenScopes: Set<String>?
    /// The body of a request to one of the proxy's own endpoints.
    var localBody: LocalBody?
    /// Completes when the response's last byte is written, when the connection closes after it.
    var responseWritten: EventLoopFuture<Void>?

    // For the access log and the metrics.
    let started: NIODeadline
    /// The route's prefix; `-` for the proxy's own endpoints, `none` when nothing matched.
    var routeLabel = "none"
    package var status: UInt = 0
    var upstreamStatus: UInt?
    var bytesIn = 0
    var bytesOut = 0
    /// When the request (last) went upstream, and how long the response head took.
    var upstreamSent: NIODeadline?
    var upstreamLatency: TimeAmount?
    /// Why the request codec refused this request (``BearerCodec/HeadError/label``), for its access-log line.
    package var refusal: String?

    init(id: String, request: ClientRequest, proxy: ProxyContext? = nil, started: NIODeadline = .now()) {
        self.id = id
        self.started = started
        self.request = request.line
        self.received = request
        self.expectsContinue =
            request.parsed.hasExpect && request.values("expect").contains { $0.lowercased() == "100-continue" }
        self.proxy = proxy
    }

    /// The record of an exchange for a request never parsed: one the connection answers and closes.
    init(id: String, unparsed request: RequestLine) {
        self.id = id
        self.started = .now()
        self.request = request
        self.received = nil
        self.expectsContinue = false
        self.proxy = nil
    }

    /// The request goes to `binding`'s upstream: `remainder` is its raw path after the route's prefix.
    package func route(to binding: RouteBinding, remainder: Substring, query: Substring?) {
        self.binding = binding
        self.remainder = remainder
        self.query = query
    }

    /// An on-behalf-of route's request: the cache of its caller's tokens (``RouteBinding/subjectTokens``).
    var callerTokens: TokenCache?

    /// The token cache the routed request's token comes from, with the generation it began with (SPEC §9): on an
    /// on-behalf-of route its caller's own, and nothing else.
    package var tokens: TokenCache? {
        guard let binding, let proxy else { return nil }
        if binding.isOnBehalfOf { return callerTokens }
        return binding.tokens(proxy)
    }

    /// Rewrites the request, `client` (its head as the codec read it), for the routed upstream with `token` (SPEC
    /// §8), into the connection's `buffer`. The head is passed in, not kept here: a copy of it would cost its retains
    /// and releases on every request (bench/counts.sh).
    package func prepare(
        client: ClientRequest, token: AccessToken?, clientAddress: String?, webSocket: Bool,
        into buffer: inout ReusedHeadBuffer
    ) {
        guard let binding else { return }
        self.sentToken = token
        if binding.discoveredTokens != nil { tokenScopes = token?.grantedScopes ?? [] }
        // A bearer token costs this one check; a DPoP-bound one a fresh proof for this very request (RFC 9449 §7.1).
        var proof: [UInt8]?
        if let token, token.isBound {
            proof = self.proof(client: client, token: token, binding: binding)
        }
        sentProof = proof != nil
        upstreamHead = buffer.writing { out in
            Forwarding.upstreamHead(
                client: client, binding: binding, remainder: remainder, query: query,
                authorization: token?.authorizationHeader, proof: proof, requestID: id, clientAddress: clientAddress,
                webSocket: webSocket, into: &out)
        }
    }

    /// The proof of possession of `token`'s key for this request, as it goes to `binding`'s upstream. Nil when the
    /// route presents no DPoP token (its cache hands it none) or the key `token` is bound to is no longer kept —
    /// another process signed out and in meanwhile: the upstream then refuses the token, and its `401` refreshes it
    /// (bound to the new key) for one replay.
    private func proof(client: ClientRequest, token: AccessToken, binding: RouteBinding) -> [UInt8]? {
        guard let proofs = binding.proofs, let key = tokens?.proofKey(for: token) else { return nil }
        return proofs.proof(method: client.line.method.rawValue, remainder: remainder, token: token, key: key)
    }

    /// Whether its generation has heard that it ended.
    private var ended = false

    /// The exchange is over — finished, abandoned by its client, or its tunnel closed: its generation counts it out
    /// now, when its access-log line is written (``ProxyConnectionHandler/record(_:status:)``), not whenever the last
    /// reference to this record goes (a token wait still running, a timer), so ARC timing is no part of the
    /// lifecycle. Idempotent.
    func end() {
        guard !ended else { return }
        ended = true
        proxy?.exchangeEnded()
    }

    /// A record dropped without an access-log line (one made for a request that was never answered because the
    /// connection had closed) still lets its generation go.
    deinit {
        end()
    }
}

/// The request body of a local endpoint: counted and hashed as it streams, never kept.
final class LocalBody {
    private(set) var length = 0
    private var hasher = SHA256()

    package func append(_ buffer: ByteBuffer) {
        length += buffer.readableBytes
        buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
    }

    var sha256Hex: String {
        hasher.finalize().lowercaseHex
    }
}
