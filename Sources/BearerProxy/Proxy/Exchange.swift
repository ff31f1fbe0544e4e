import Crypto
import NIOCore
import NIOHTTP1

/// One request/response exchange on a client connection. Confined to the connection's event loop.
final class Exchange {
    /// What answers the request.
    enum Kind {
        /// One of the proxy's own `/-/` endpoints; the body is hashed as it arrives, then answered at its end.
        case local(LocalBody)
        /// The proxy answered (or is answering) by itself — an error, a preflight; any remaining request body is
        /// discarded.
        case answered
        /// Forwarded to a route's upstream.
        case proxied(UpstreamLeg)
    }

    let id: String
    let request: HTTPRequestHead
    /// Whether the client wants the connection kept open after this exchange (RFC 9112 §9.3).
    let keepAlive: Bool
    var kind: Kind
    /// The generation in force when the request arrived; the exchange uses it until it ends (SPEC §9), and counts
    /// against it until then (nil when nothing was installed yet, or for an answer to a request never parsed).
    let proxy: ProxyContext?
    /// The request target as the guard accepted it (absolute-form already reduced to origin-form).
    var target: RequestTarget?
    /// The allowed browser origin this request came from, answered with CORS headers.
    var corsOrigin: String?
    /// The client's request `end` arrived.
    var requestEnded = false
    /// A final response head went to the client (after this, failures can only close the connection).
    var responseStarted = false
    /// The response `end` went to the client.
    var responseEnded = false
    /// The connection must close after this exchange (framing, a refused `Expect`, shutdown).
    var closeAfter = false
    /// The request is a WebSocket handshake (``WebSocketUpgrade``): a `101` turns the connection into a tunnel.
    var webSocket = false
    /// A `100 Continue` was relayed to the client.
    var sentContinue = false
    /// When the next request body byte is due, while the request has not ended (the body-stall limit).
    var bodyDeadline: NIODeadline?
    /// Completes when the response's last byte is written, when someone needs to wait for it.
    var responseWritten: EventLoopFuture<Void>?

    // For the access log and the metrics.
    let started = NIODeadline.now()
    /// The route's prefix; `-` for the proxy's own endpoints, `none` when nothing matched.
    var routeLabel = "none"
    var status: UInt = 0
    var upstreamStatus: UInt?
    var bytesIn = 0
    var bytesOut = 0
    /// When the request (last) went upstream, and how long the response head took.
    var upstreamSent: NIODeadline?
    var upstreamLatency: TimeAmount?

    init(id: String, request: HTTPRequestHead, kind: Kind, proxy: ProxyContext? = nil) {
        self.id = id
        self.request = request
        self.keepAlive = request.isKeepAlive
        self.kind = kind
        self.proxy = proxy
    }

    /// The exchange has ended when nothing refers to it any more — its connection, a token wait, a timer or a
    /// tunnel: whichever path ended it, this is the one place its generation hears of it.
    deinit {
        proxy?.exchangeEnded()
    }

    /// Whether the client sent `Expect: 100-continue` (RFC 9110 §10.1.1) and so may wait before sending its body.
    var expectsContinue: Bool {
        request.headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" }
    }
}

/// The request body of a local endpoint: counted and hashed as it streams, never kept.
final class LocalBody {
    private(set) var length = 0
    private var hasher = SHA256()

    func append(_ buffer: ByteBuffer) {
        length += buffer.readableBytes
        buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
    }

    var sha256Hex: String {
        hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// The upstream half of a proxied exchange.
final class UpstreamLeg {
    let binding: RouteBinding
    /// The configuration the exchange began with: a replay connects, and gets its token, with this one.
    let proxy: ProxyContext
    /// What the upstream request is made of, kept for a replay with a new token: the raw path after the prefix
    /// and the raw query.
    let remainder: Substring
    let query: Substring?
    /// The rewritten request head; set once the token is known.
    var head: HTTPRequestHead?
    /// The connection in use, once acquired.
    var upstream: UpstreamHandler?
    /// Request parts that arrived before the connection was ready (at most one read's worth: reads stop meanwhile).
    /// An array, not a ring buffer: it stays empty (and unallocated) for most requests.
    var pending: [HTTPClientRequestPart] = []
    var sentBody = false
    var endForwarded = false
    var sawResponse = false
    var upstreamKeepAlive = false
    var replayed = false
    /// When the response head is due (set once the request has gone upstream in full, cleared when it arrives).
    var responseDeadline: NIODeadline?
    /// When waiting for the token ends (set while the token is being obtained).
    var tokenDeadline: NIODeadline?
    /// The bearer token sent with the request, to drop exactly that one if the upstream rejects it.
    var token: String?
    /// Starts (again) the upstream request with a token: rewrites the head and connects.
    /// A copy of the request body while it stays within ``replayLimit`` (nil once it grew past it), so the request
    /// can be sent again once with a new token.
    var keptBody: [ByteBuffer]? = []
    private var keptBytes = 0
    /// The retry chosen for a rejected token; while set, the upstream's answer is read and dropped.
    var tokenRetry: TokenRetry?
    var tokenRetried = false

    /// How a rejected token is replaced before the one replay (SPEC §7).
    enum TokenRetry: Equatable {
        /// `invalid_token`: drop it and get a new one.
        case refresh
        /// `insufficient_claims`: get one that satisfies this claims request.
        case claims(String)
    }

    /// Bodies up to this size are kept for a replay; larger ones are streamed only (the 401 then passes through).
    static let replayLimit = 64 * 1024

    func keep(_ buffer: ByteBuffer) {
        guard keptBody != nil else { return }
        keptBytes += buffer.readableBytes
        if keptBytes > Self.replayLimit {
            keptBody = nil
        } else {
            keptBody!.append(buffer)
        }
    }

    init(binding: RouteBinding, proxy: ProxyContext, remainder: Substring, query: Substring?) {
        self.binding = binding
        self.proxy = proxy
        self.remainder = remainder
        self.query = query
    }

    var origin: UpstreamOrigin { binding.origin }
    var responseTimeout: TimeAmount { binding.responseTimeout }

    /// A request may be sent again on a fresh connection when a reused one failed before answering only if
    /// repeating it is harmless: an idempotent method (RFC 9110 §9.2.2) and no body sent (data-plane pitfall 4).
    func isReplayable(_ method: HTTPMethod) -> Bool {
        guard !replayed, !sawResponse, !sentBody else { return false }
        switch method {
        case .GET, .HEAD, .OPTIONS, .PUT, .DELETE: return true
        default: return false
        }
    }
}
