import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// What a request asks for with `Upgrade` (RFC 9110 §7.8) — and the headers of a WebSocket handshake on both hops
/// (RFC 6455 §4).
///
/// NIO's parser, like every HTTP/1.1 server's, reads nothing after a request that carries both `Upgrade` and
/// `Connection: upgrade`: the bytes that follow belong to the new protocol. So such a connection either becomes a
/// tunnel (WebSocket, answered `101`) or closes after its one exchange; other upgrade tokens (`h2c`, …) are stripped
/// and the request is proxied as HTTP/1.1 (SPEC §8).
enum WebSocketUpgrade {
    enum Requested: Equatable {
        /// No upgrade: an ordinary request.
        case none
        /// `GET` over HTTP/1.1 with `Upgrade: websocket` and `Connection: upgrade`.
        case webSocket
        /// Another protocol, or a WebSocket handshake that is not a bodiless `GET` over HTTP/1.1.
        case other
    }

    /// Whether `request` asks to switch protocols, and to which. The codec found `Upgrade` and `upgrade` in
    /// `Connection` (``BearerCodec/RequestHead/asksToUpgrade``); only then is the `Upgrade` value read.
    static func requested(_ request: ClientRequest) -> Requested {
        guard request.parsed.asksToUpgrade else { return .none }
        var webSocket = false
        for value in request.values("upgrade") {
            HopByHop.forEachOption(in: value) { token in
                if FieldName.equals(bytes: token, "websocket") { webSocket = true }
            }
        }
        guard webSocket else { return .other }
        // RFC 6455 §4.1: the handshake is a GET without a body. With a body NIO's parser reads the request as an
        // ordinary one (llhttp upgrades only bodiless requests), so it must not become a tunnel.
        let head = request.line
        return request.parsed.framing == .none && head.method == .GET && head.version == .http1_1 ? .webSocket : .other
    }

    /// Adds the handshake's hop-by-hop headers to a request going upstream (RFC 6455 §4.1).
    static func addHandshake(to headers: inout HTTPHeaders) {
        headers.add(name: "connection", value: "upgrade")
        headers.add(name: "upgrade", value: "websocket")
    }

    /// The `101 Switching Protocols` the client receives for the upstream's: its end-to-end headers
    /// (`Sec-WebSocket-Accept`, `-Protocol`, `-Extensions`, …) unchanged, the handshake's own hop-by-hop ones, and
    /// the proxy's `X-Request-Id`.
    static func switchingProtocols(upstream: HTTPHeaders, requestID: String) -> HTTPResponseHead {
        let options = HeaderPolicy.connectionOptions(in: upstream)
        var headers = HTTPHeaders()
        for (name, value) in upstream
        where !HeaderPolicy.isDropped(name, .notForwardedDown, options: options)
            && !FieldName.equals(name, "content-length")
        {
            headers.add(name: name, value: value)
        }
        addHandshake(to: &headers)
        headers.add(name: "x-request-id", value: requestID)
        return HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: headers)
    }
}
