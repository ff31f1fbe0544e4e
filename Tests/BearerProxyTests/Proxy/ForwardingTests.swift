import NIOCore
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

@Suite("Forwarding: the pure request and response rewrite")
struct ForwardingTests {
    let route: RouteBinding

    init() throws {
        route = try Self.binding(
            #"{ "prefix": "/graph", "upstream": "https://graph.example.com:8443/v1.0", "scopes": ["api://g/Read"] }"#)
    }

    /// The route of `json` as the data plane holds it.
    static func binding(_ json: String) throws -> RouteBinding {
        try RouteBinding(TestConfigurations.route(json), timeouts: ProxyTimeouts()) {
            try UpstreamTLS(caFile: $0, version: $1)
        }
    }

    /// The upstream's head for a client's request with `headers`, read back by the codec, and how the proxy frames
    /// the body it forwards (the encoder chunks it, or sends it as it is).
    private func forward(_ headers: [(String, String)], method: HTTPMethod = .GET, remainder: Substring = "/me")
        throws -> (head: HTTPRequestHead, framing: Forwarding.Framing)
    {
        let client = HTTPRequestHead(
            version: .http1_1, method: method, uri: "/graph/me", headers: HTTPHeaders(headers))
        let written = try Forwarding.writtenUpstreamHead(
            client: client, binding: route, remainder: remainder, query: "a=%2F&b", authorization: "Bearer TOKEN",
            requestID: "rid", clientAddress: "127.0.0.1")
        let parsed = try ClientRequest(client).parsed
        #expect(written.chunked == (parsed.framing == .chunked), "the head's framing is the one the body gets")
        let framing: Forwarding.Framing =
            switch parsed.framing {
            case .chunked: .chunked
            case .length(let length): .length(length)
            case .none, .untilClose: .none
            }
        return (try HTTPRequestHead(written: written.bytes), framing)
    }

    @Test("the client's Authorization is replaced, never kept or merged")
    func replacesAuthorization() throws {
        let head = try forward([("Authorization", "Bearer client"), ("authorization", "Basic x")]).head
        #expect(head.headers[canonicalForm: "authorization"] == ["Bearer TOKEN"])
    }

    @Test("Host is the upstream's, first; path is base path + raw remainder; query kept byte for byte")
    func rewritesHostAndPath() throws {
        let head = try forward([("Host", "localhost:8080")], remainder: "/a%2Fb").head
        #expect(head.headers.first?.name == "host")
        #expect(head.headers[canonicalForm: "host"] == ["graph.example.com:8443"])
        #expect(head.uri == "/v1.0/a%2Fb?a=%2F&b")
        #expect(head.version == .http1_1)
    }

    @Test("an empty remainder forwards the base path itself")
    func emptyRemainder() throws {
        #expect(try forward([], remainder: "").head.uri == "/v1.0?a=%2F&b")
    }

    @Test(
        "hop-by-hop headers and those named in Connection are stripped",
        arguments: [
            "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "TE",
            "Trailer",
            "Upgrade", "X-Named-By-Connection",
        ])
    func stripsHopByHop(_ name: String) throws {
        let head = try forward([(name, "v"), ("Connection", "x-named-by-connection, keep-alive"), ("Accept", "a")]).head
        #expect(!head.headers.contains(name: name))
        #expect(head.headers[canonicalForm: "accept"] == ["a"])
    }

    @Test("Connection options: any case, spaces and tabs around them, empty items; hop-by-hop names add nothing")
    func connectionOptions() throws {
        let headers: HTTPHeaders = ["Connection": " X-One ,\tx-TWO,, keep-alive", "connection": "Close,TE"]
        #expect(HeaderPolicy.connectionOptions(in: headers) == ["x-one", "x-two", "close"])
        #expect(HeaderPolicy.connectionOptions(in: ["Connection": "keep-alive"]).isEmpty)
        let head = try forward([("X-One", "1"), ("x-two", "2"), ("X-Three", "3"), ("Connection", "x-one,\tX-Two")]).head
        #expect(!head.headers.contains(name: "x-one"))
        #expect(!head.headers.contains(name: "x-two"))
        #expect(head.headers[canonicalForm: "x-three"] == ["3"])
    }

    @Test("Forwarded and X-Forwarded-* from the client are dropped (spoofable)")
    func dropsForwarded() throws {
        let head = try forward([
            ("Forwarded", "for=1.2.3.4"), ("X-Forwarded-For", "1.2.3.4"), ("x-forwarded-host", "e"),
        ])
        .head
        #expect(!head.headers.contains(name: "forwarded"))
        #expect(!head.headers.contains(name: "x-forwarded-for"))
        #expect(!head.headers.contains(name: "x-forwarded-host"))
    }

    @Test("framing is explicit: chunked stays chunked, Content-Length kept, a bodiless POST gets Content-Length: 0")
    func setsFraming() throws {
        let chunked = try forward([("Transfer-Encoding", "chunked")], method: .POST)
        #expect(chunked.framing == .chunked)
        #expect(chunked.head.headers[canonicalForm: "transfer-encoding"] == ["chunked"])
        let sized = try forward([("Content-Length", "5")], method: .PUT)
        #expect(sized.framing == .length(5))
        #expect(sized.head.headers[canonicalForm: "content-length"] == ["5"])
        #expect(try forward([], method: .POST).head.headers[canonicalForm: "content-length"] == ["0"])
        #expect(try !forward([], method: .GET).head.headers.contains(name: "content-length"))
        // A client's own `Content-Length: 0` is said on, whatever the method.
        #expect(
            try forward([("Content-Length", "0")], method: .GET).head.headers[canonicalForm: "content-length"] == ["0"])
    }

    @Test(
        "framing comes from the parsed message: a Connection option naming it is refused before anything is forwarded",
        arguments: ["content-length", "Content-Length, keep-alive", "transfer-encoding", "close, TRANSFER-ENCODING"])
    func framingSurvivesConnectionOptions(_ option: String) throws {
        #expect(throws: HeadError.self) {
            try forward([("Content-Length", "5"), ("Connection", option)], method: .POST)
        }
        #expect(throws: HeadError.self) {
            try forward([("Transfer-Encoding", "chunked"), ("Connection", option)], method: .POST)
        }
        // Without the option, the proxy's own spelling of the client's framing.
        let sized = try forward([("Content-Length", "05")], method: .POST)
        #expect(sized.framing == .length(5))
        #expect(sized.head.headers[canonicalForm: "content-length"] == ["5"])
        #expect(!sized.head.headers.contains(name: "transfer-encoding"))
    }

    @Test("route header rules remove and set headers")
    func headerRules() throws {
        let route = try Self.binding(
            #"{ "prefix": "/a", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/R"], "#
                + #""headers": { "set": { "X-Api-Version": "2" }, "remove": ["Cookie"] } }"#)
        let client = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: "/a", headers: ["Cookie": "c", "X-Api-Version": "1"])
        let head = try Forwarding.upstreamRequest(
            client: client, binding: route, remainder: "", query: nil, authorization: nil, requestID: "r",
            clientAddress: nil)
        #expect(!head.headers.contains(name: "cookie"))
        #expect(head.headers[canonicalForm: "x-api-version"] == ["2"])
        #expect(!head.headers.contains(name: "authorization"))
    }

    @Test("a route's rules compile once into its binding, in order, and the forwarded head follows them")
    func compiledHeaderRules() throws {
        let route = try Self.binding(
            #"{ "prefix": "/a", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/R"], "forwardedHeaders": true, "#
                + #""headers": { "set": { "X-B": "b", "x-a": "a" }, "remove": ["Cookie", "cookie", "X-Old"] } }"#)
        #expect(
            route.headerRules == [
                .set(name: "x-a", value: "a"), .set(name: "X-B", value: "b"), .forwardedFor, .forwardedProto,
                .forwardedHost,
            ])
        #expect(route.removedHeaders == ["cookie", "x-old"])
        let client = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: "/a",
            headers: ["Host": "proxy.local", "X-Old": "o", "X-Forwarded-For": "6.6.6.6", "x-a": "client"])
        let head = try Forwarding.upstreamRequest(
            client: client, binding: route, remainder: "", query: nil, authorization: "Bearer T", requestID: "r",
            clientAddress: "127.0.0.1")
        let names = head.headers.map { $0.name.lowercased() }
        #expect(
            names == [
                "host", "x-a", "x-b", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "authorization",
                "x-request-id",
            ])
        #expect(head.headers[canonicalForm: "x-forwarded-for"] == ["127.0.0.1"], "the client's own is dropped")
        #expect(head.headers[canonicalForm: "x-a"] == ["a"])
        #expect(head.headers[canonicalForm: "x-forwarded-host"] == ["proxy.local"])
    }

    @Test("route rules larger than the head's estimate are written whole, once, in order (HeadBytes' second pass)")
    func rulesBeyondTheEstimate() throws {
        // The head is written in one piece within an estimate that leaves a route's own rules out; these need
        // several times the estimate, so the writer must take a second pass and keep only its bytes.
        let long = String(repeating: "v", count: 3000)
        let route = try Self.binding(
            #"{ "prefix": "/a", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/R"], "forwardedHeaders": true, "#
                + #""headers": { "set": { "X-Long": "\#(long)", "X-Short": "s" } } }"#)
        let client = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/a", headers: ["Host": "proxy.local"])
        let written = try Forwarding.writtenUpstreamHead(
            client: client, binding: route, remainder: "/x", query: "q=1", authorization: "Bearer T", requestID: "r",
            clientAddress: "127.0.0.1")
        let text = String(buffer: written.bytes)
        #expect(text.hasPrefix("GET /x?q=1 HTTP/1.1\r\nhost: 127.0.0.1:9\r\n"))
        #expect(text.hasSuffix("authorization: Bearer T\r\nx-request-id: r\r\n\r\n"))
        let head = try HTTPRequestHead(written: written.bytes)
        #expect(head.headers[canonicalForm: "x-long"] == [long[...]])
        #expect(head.headers.map { $0.name.lowercased() }.filter { $0 == "host" }.count == 1)
        #expect(head.headers[canonicalForm: "x-forwarded-host"] == ["proxy.local"])
    }

    @Test("the framing decided from the upstream's head alone is the one its rewrite for the client has")
    func framingAgrees() throws {
        let route = try Self.binding(#"{ "prefix": "/a", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/R"] }"#)
        let heads: [String] = [
            "", "Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n",
            "Content-Length: 5\r\nConnection: content-length\r\n", "Connection: keep-alive\r\n",
            "Content-Length: 5\r\nConnection: close, x-a\r\n",
        ]
        for version in [HTTPVersion.http1_0, .http1_1] {
            for method in [HTTPMethod.GET, .HEAD] {
                for status in ["200 OK", "204 No Content", "304 Not Modified", "201 Created"] {
                    for fields in heads {
                        let request = HTTPRequestHead(version: version, method: method, uri: "/a")
                        let upstream = try UpstreamResponse.parsing(
                            "HTTP/1.1 \(status)\r\n\(fields)\r\n", requestWasHead: method == .HEAD)
                        let rewritten = try Forwarding.clientResponse(
                            upstream: upstream, request: request, binding: route, requestID: "r", keepAlive: true)
                        #expect(
                            Forwarding.responseFraming(upstream, request: RequestLine(request)) == rewritten.framing,
                            "\(version) \(method) \(status) \(fields)")
                        #expect(
                            rewritten.head.headers.contains(name: "content-length")
                                == (rewritten.framing == .contentLength
                                    || (rewritten.framing == .none && fields.hasPrefix("Content-Length: 5\r\n")
                                        && !fields.contains("content-length") && !status.hasPrefix("204"))),
                            "a Content-Length goes to the client exactly when it frames the body or describes one: \(version) \(method) \(status) \(fields)"
                        )
                    }
                }
            }
        }
    }

    @Test("responses: hop-by-hop stripped, status kept, chunked re-framed for HTTP/1.1 and close-delimited for 1.0")
    func responseFraming() throws {
        let upstream = try UpstreamResponse.parsing(
            "HTTP/1.1 418 I'm a teapot\r\nTransfer-Encoding: chunked\r\nConnection: close, x-hop\r\nX-Hop: 1\r\n"
                + "X-Keep: 2\r\nX-Request-Id: theirs\r\n\r\n")
        let request11 = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/graph")
        let (head, framing, _) = try Forwarding.clientResponse(
            upstream: upstream, request: request11, binding: route, requestID: "rid", keepAlive: true)
        #expect(head.status == .imATeapot)
        #expect(framing == .chunked)
        #expect(!head.headers.contains(name: "x-hop"))
        #expect(head.headers[canonicalForm: "x-keep"] == ["2"])
        #expect(head.headers[canonicalForm: "x-request-id"] == ["rid"])
        #expect(head.headers[canonicalForm: "transfer-encoding"] == ["chunked"])
        #expect(!head.headers.contains(name: "connection"))

        let request10 = HTTPRequestHead(version: .http1_0, method: .GET, uri: "/graph")
        let old = try Forwarding.clientResponse(
            upstream: upstream, request: request10, binding: route, requestID: "rid", keepAlive: true)
        #expect(old.framing == .untilClose)
        #expect(old.head.version == .http1_0)
        #expect(old.head.headers[canonicalForm: "connection"] == ["close"])
        #expect(!old.head.headers.contains(name: "transfer-encoding"))

        // With a length, an HTTP/1.0 client's connection is kept when the exchange keeps it, and the answer says so.
        let sized = try UpstreamResponse.parsing("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
        for keepAlive in [true, false] {
            let answer = try Forwarding.clientResponse(
                upstream: sized, request: request10, binding: route, requestID: "rid", keepAlive: keepAlive)
            #expect(answer.framing == .contentLength)
            #expect(answer.head.headers[canonicalForm: "connection"] == [keepAlive ? "keep-alive" : "close"])
        }
    }

    @Test("the client's head is the upstream's bytes: reason, order and spelling kept; the proxy's lines after them")
    func responseBytes() throws {
        let upstream = try UpstreamResponse.parsing(
            "HTTP/1.1 200 Fine Thanks\r\nx-Lower: a\r\nSet-Cookie: a=1\r\nKeep-Alive: timeout=5\r\n"
                + "Set-Cookie: b=2\r\nContent-Length: 3\r\n\r\n")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/graph")
        let written = try Forwarding.clientResponse(
            upstream: upstream, request: request, binding: route, requestID: "rid", keepAlive: true)
        #expect(
            String(buffer: written.bytes)
                == "HTTP/1.1 200 Fine Thanks\r\nx-Lower: a\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n"
                + "Content-Length: 3\r\nx-request-id: rid\r\n\r\n")
        #expect(written.framing == .contentLength)

        // RFC 9112 §4: the space before an empty reason, which the codec lets an upstream leave out, is put back.
        let bare = try Forwarding.clientResponse(
            upstream: UpstreamResponse.parsing("HTTP/1.1 204\r\nContent-Length: 0\r\n\r\n"), request: request,
            binding: route, requestID: "r", keepAlive: false)
        #expect(String(buffer: bare.bytes) == "HTTP/1.1 204 \r\nx-request-id: r\r\nconnection: close\r\n\r\n")
    }

    @Test("a browser's response carries the proxy's CORS fields, never the upstream's")
    func responseCORS() throws {
        let upstream = try UpstreamResponse.parsing(
            "HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nAccess-Control-Allow-Credentials: true\r\n"
                + "Access-Control-Expose-Headers: x-secret\r\nAccess-Control-Max-Age: 5\r\nContent-Length: 0\r\n\r\n")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/graph")
        let browser = try Forwarding.clientResponse(
            upstream: upstream, request: request, binding: route, requestID: "r", keepAlive: true,
            corsOrigin: "https://app.example")
        #expect(browser.head.headers[canonicalForm: "access-control-allow-origin"] == ["https://app.example"])
        #expect(!browser.head.headers.contains(name: "access-control-allow-credentials"))
        #expect(browser.head.headers[canonicalForm: "access-control-expose-headers"] == ["x-request-id"])
        #expect(browser.head.headers[canonicalForm: "access-control-max-age"] == ["5"])
        #expect(browser.head.headers[canonicalForm: "vary"] == ["Origin"])
        // Without an allowed origin the response is the upstream's.
        let plain = try Forwarding.clientResponse(
            upstream: upstream, request: request, binding: route, requestID: "r", keepAlive: true)
        #expect(plain.head.headers[canonicalForm: "access-control-allow-origin"] == ["*"])
        #expect(plain.head.headers[canonicalForm: "access-control-allow-credentials"] == ["true"])
    }

    @Test("a Location into the upstream is rewritten where it stands in the head")
    func responseLocation() throws {
        let upstream = try UpstreamResponse.parsing(
            "HTTP/1.1 302 Found\r\nX-A: 1\r\nLocation: https://graph.example.com:8443/v1.0/users/1?x=1\r\n"
                + "X-B: 2\r\nContent-Length: 0\r\n\r\n")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/graph")
        let written = try Forwarding.clientResponse(
            upstream: upstream, request: request, binding: route, requestID: "r", keepAlive: true)
        #expect(
            String(buffer: written.bytes)
                == "HTTP/1.1 302 Found\r\nX-A: 1\r\nLocation: /graph/users/1?x=1\r\nX-B: 2\r\nContent-Length: 0\r\n"
                + "x-request-id: r\r\n\r\n")
    }

    @Test("HEAD responses keep Content-Length and have no body; a 204's is dropped")
    func headResponse() throws {
        let upstream = try UpstreamResponse.parsing(
            "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", requestWasHead: true)
        let request = HTTPRequestHead(version: .http1_1, method: .HEAD, uri: "/graph")
        let (head, framing, _) = try Forwarding.clientResponse(
            upstream: upstream, request: request, binding: route, requestID: "r", keepAlive: true)
        #expect(framing == .none)
        #expect(head.headers[canonicalForm: "content-length"] == ["42"])

        let noContent = try Forwarding.clientResponse(
            upstream: UpstreamResponse.parsing("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"),
            request: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/graph"), binding: route, requestID: "r",
            keepAlive: true)
        #expect(noContent.framing == .none)
        #expect(!noContent.head.headers.contains(name: "content-length"))
    }

    @Test("trailers lose the fields that may never be trailers; a section with none of them passes as it is")
    func trailers() {
        let kept = ByteBuffer(string: "X-Sum: 9\r\nServer-Timing: a\r\n")
        #expect(Forwarding.clientTrailers(kept) == kept)
        #expect(Forwarding.clientTrailers(nil) == nil)
        let mixed = ByteBuffer(
            string:
                "X-Sum: 9\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\nHost: h\r\nConnection: x\r\nX-B: 2\r\n")
        #expect(Forwarding.clientTrailers(mixed).map { String(buffer: $0) } == "X-Sum: 9\r\nX-B: 2\r\n")
        #expect(Forwarding.clientTrailers(ByteBuffer(string: "Content-Length: 5\r\n")) == nil)
    }

    @Test(
        "Location into the route's upstream is rewritten to the local prefix; anything else is left alone",
        arguments: [
            ("https://graph.example.com:8443/v1.0/users/1?x=1", "/graph/users/1?x=1"),
            ("https://GRAPH.example.com:8443/v1.0", "/graph"),
            ("/v1.0/users", "/graph/users"),
            ("https://graph.example.com:8443/v2/users", "https://graph.example.com:8443/v2/users"),
            ("https://graph.example.com/v1.0/users", "https://graph.example.com/v1.0/users"),
            ("http://graph.example.com:8443/v1.0/users", "http://graph.example.com:8443/v1.0/users"),
            ("https://evil.example/v1.0/users", "https://evil.example/v1.0/users"),
            ("https://user@graph.example.com:8443/v1.0/x", "https://user@graph.example.com:8443/v1.0/x"),
            ("//graph.example.com:8443/v1.0/x", "//graph.example.com:8443/v1.0/x"),
            ("/v1.0x/users", "/v1.0x/users"),
            ("relative/path", "relative/path"),
        ])
    func rewritesLocation(_ location: String, _ expected: String) {
        #expect(Forwarding.rewriteLocation(location, binding: route) == expected)
    }
}
