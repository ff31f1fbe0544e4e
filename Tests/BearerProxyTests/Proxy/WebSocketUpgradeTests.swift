import NIOHTTP1
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

@Suite("WebSocket handshakes: what a request asks for, and the 101 the client gets")
struct WebSocketUpgradeTests {
    static func head(_ headers: HTTPHeaders, method: HTTPMethod = .GET, version: HTTPVersion = .http1_1)
        -> HTTPRequestHead
    {
        HTTPRequestHead(version: version, method: method, uri: "/ws", headers: headers)
    }

    @Test(
        "Upgrade and Connection: upgrade together, in any case and list position",
        arguments: [
            ([("Connection", "Upgrade"), ("Upgrade", "websocket")], WebSocketUpgrade.Requested.webSocket),
            ([("connection", "keep-alive, upgrade"), ("UPGRADE", "WebSocket")], .webSocket),
            ([("Connection", "upgrade"), ("Upgrade", "h2c, websocket")], .webSocket),
            ([("Connection", "keep-alive"), ("Connection", "upgrade"), ("Upgrade", "websocket")], .webSocket),
            ([("Connection", "upgrade"), ("Upgrade", "h2c")], .other),
            ([("Upgrade", "websocket")], .none),
            ([("Connection", "upgrade")], .none),
            ([("Connection", "upgrades"), ("Upgrade", "websocket")], .none),
        ] as [([(String, String)], WebSocketUpgrade.Requested)])
    func requested(_ headers: [(String, String)], _ expected: WebSocketUpgrade.Requested) throws {
        #expect(try WebSocketUpgrade.requested(Self.head(HTTPHeaders(headers))) == expected)
    }

    @Test("a WebSocket handshake is a bodiless GET over HTTP/1.1; anything else upgrading is 'other'")
    func onlyGetOverHTTP11() throws {
        let headers: HTTPHeaders = ["Connection": "upgrade", "Upgrade": "websocket"]
        #expect(try WebSocketUpgrade.requested(Self.head(headers, method: .POST)) == .other)
        #expect(try WebSocketUpgrade.requested(Self.head(headers, version: .http1_0)) == .other)
        var sized = headers
        sized.add(name: "Content-Length", value: "5")
        #expect(try WebSocketUpgrade.requested(Self.head(sized)) == .other)
        var chunked = headers
        chunked.add(name: "Transfer-Encoding", value: "chunked")
        #expect(try WebSocketUpgrade.requested(Self.head(chunked)) == .other)
        var empty = headers
        empty.add(name: "Content-Length", value: "0")
        #expect(try WebSocketUpgrade.requested(Self.head(empty)) == .webSocket)
    }

    @Test("the client's 101 keeps the upstream's end-to-end headers and has the proxy's handshake and request id")
    func switchingProtocols() {
        let upstream = HTTPResponseHead(
            version: .http1_1, status: .switchingProtocols,
            headers: [
                "Upgrade": "websocket", "Connection": "Upgrade, X-Hop", "X-Hop": "h", "Sec-WebSocket-Accept": "abc",
                "Sec-WebSocket-Protocol": "chat", "X-Request-Id": "theirs",
            ])
        let head = WebSocketUpgrade.switchingProtocols(upstream: upstream.headers, requestID: "ours")
        #expect(head.status == .switchingProtocols)
        #expect(head.headers[canonicalForm: "sec-websocket-accept"] == ["abc"])
        #expect(head.headers[canonicalForm: "sec-websocket-protocol"] == ["chat"])
        #expect(head.headers[canonicalForm: "upgrade"] == ["websocket"])
        #expect(head.headers[canonicalForm: "connection"] == ["upgrade"])
        #expect(head.headers[canonicalForm: "x-request-id"] == ["ours"])
        #expect(!head.headers.contains(name: "x-hop"))
    }
}
