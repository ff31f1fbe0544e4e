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

/// One hostile request: raw bytes (so nothing is normalised on the way), and the status the proxy must answer.
struct HostileRequest: Sendable, CustomTestStringConvertible {
    let name: String
    let status: Int
    /// The request; `{HOST}` becomes `127.0.0.1:<proxy port>`.
    let raw: String
    var method = "GET"

    var testDescription: String { "\(name) → \(status)" }

    init(_ name: String, _ status: Int, _ raw: String, method: String = "GET") {
        self.name = name
        self.status = status
        self.raw = raw
        self.method = method
    }

    /// A GET of `target` with the given header lines.
    static func get(_ name: String, _ status: Int, target: String = "/api/x", _ headers: String...) -> HostileRequest {
        HostileRequest(name, status, "GET \(target) HTTP/1.1\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
    }
}

@Suite("Security: hostile requests never reach the upstream or the token provider")
struct HostileRequestTests {
    static let ourHost = "Host: {HOST}"

    static let cases: [HostileRequest] = [
        // DNS rebinding: a page on another name that resolves to 127.0.0.1 (kubernetes #8871, CVE-2025-66414).
        .get("foreign Host", 403, "Host: evil.example"),
        .get("suffix of localhost", 403, "Host: localhost.evil.com"),
        .get("wildcard DNS for 127.0.0.1", 403, "Host: 127.0.0.1.nip.io"),
        .get("foreign Host with port", 403, "Host: evil.example:8080"),
        .get("uppercase foreign Host", 403, "Host: LOCALHOST.EVIL.COM"),
        .get("trailing dot", 403, "Host: localhost."),
        .get("IPv4-mapped IPv6", 403, "Host: [::ffff:127.0.0.1]"),
        .get("long form of ::1", 403, "Host: [0:0:0:0:0:0:0:1]:8080"),
        .get("short IPv4", 403, "Host: 127.1"),
        .get("decimal IPv4", 403, "Host: 2130706433"),
        .get("userinfo in Host", 400, "Host: localhost@evil.example"),
        .get("two Hosts in one field", 400, "Host: localhost, evil.example"),
        .get("two Host fields", 400, "Host: localhost", "Host: evil.example"),
        .get("no Host on HTTP/1.1", 400, "Accept: */*"),
        // Browsers: cross-site requests and origins not listed (MCP Inspector CVE-2025-49596).
        .get("foreign Origin", 403, ourHost, "Origin: https://evil.example"),
        .get("null Origin", 403, ourHost, "Origin: null"),
        .get("Origin that extends an allowed one", 403, ourHost, "Origin: http://localhost:3000.evil.example"),
        .get("allowed host, other port", 403, ourHost, "Origin: http://localhost:3001"),
        .get("Sec-Fetch-Site cross-site", 403, ourHost, "Sec-Fetch-Site: cross-site"),
        .get("Sec-Fetch-Site same-site", 403, ourHost, "Sec-Fetch-Site: same-site"),
        HostileRequest(
            "preflight from a foreign origin", 403,
            "OPTIONS /api/x HTTP/1.1\r\n\(ourHost)\r\nOrigin: https://evil.example\r\n"
                + "Access-Control-Request-Method: DELETE\r\n\r\n"),
        // Absolute-form whose authority is not ours (haproxy #1378, carapaceproxy PR #614).
        .get("absolute-form, foreign authority", 403, target: "http://evil.example/api/x", ourHost),
        .get("absolute-form https, foreign authority", 403, target: "https://evil.example/api/x", ourHost),
        .get("absolute-form, rebinding authority", 403, target: "http://localhost.evil.com/api/x", ourHost),
        // Methods that make no sense through a token-adding reverse proxy.
        HostileRequest("CONNECT", 405, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n"),
        .get("TRACE", 405, ourHost).replacingMethod("TRACE"),
        // Escaping the route prefix (Nitro CVE-2026-44373).
        .get("dot-dot", 400, target: "/api/../admin", ourHost),
        .get("encoded dot-dot", 400, target: "/api/%2e%2e/admin", ourHost),
        .get("encoded dot-dot-slash, upper case", 400, target: "/api/%2E%2E%2Fadmin", ourHost),
        .get("dot-dot with encoded slash", 400, target: "/api/..%2fadmin", ourHost),
        .get("dot-dot with encoded backslash", 400, target: "/api/..%5cadmin", ourHost),
        .get("mixed encoded dot", 400, target: "/api/.%2e/admin", ourHost),
        .get("encoded single dot", 400, target: "/api/%2e/x", ourHost),
        .get("trailing dot-dot", 400, target: "/api/x/..", ourHost),
        // The rest of the dot-segment family (SPEC §9): path parameters that Tomcat and Spring strip before
        // reading `..`, double and triple encoding for an upstream that decodes more than once, IIS's %u,
        // overlong UTF-8, and trailing spaces that Windows drops.
        .get("dot-dot with path parameter", 400, target: "/api/..;/admin", ourHost),
        .get("dot-dot with parameter value", 400, target: "/api/x/..;jsessionid=1/..;/admin", ourHost),
        .get("dot with path parameter", 400, target: "/api/.;x/admin", ourHost),
        .get("dot-dot with encoded semicolon", 400, target: "/api/..%3b/admin", ourHost),
        .get("double-encoded dot-dot", 400, target: "/api/%252e%252e/admin", ourHost),
        .get("double-encoded slash after dot-dot", 400, target: "/api/..%252fadmin", ourHost),
        .get("triple-encoded dot-dot", 400, target: "/api/%25252e%25252e/admin", ourHost),
        .get("encoded four times", 400, target: "/api/%2525252e%2525252e/admin", ourHost),
        .get("double-encoded NUL", 400, target: "/api/a%2500b", ourHost),
        .get("IIS %u dot-dot", 400, target: "/api/%u002e%u002e/admin", ourHost),
        .get("overlong UTF-8 dot-dot", 400, target: "/api/%c0%ae%c0%ae/admin", ourHost),
        .get("overlong UTF-8 slash", 400, target: "/api/..%c0%afadmin", ourHost),
        .get("three-byte overlong dot", 400, target: "/api/%e0%80%ae%e0%80%ae/admin", ourHost),
        .get("dot-dot with trailing space", 400, target: "/api/..%20/admin", ourHost),
        .get("fullwidth dot-dot (NFKC)", 400, target: "/api/%EF%BC%8E%EF%BC%8E/admin", ourHost),
        .get("dot-dot with backslash and parameter", 400, target: "/api/..;\\admin", ourHost),
        .get("encoded NUL", 400, target: "/api/a%00b", ourHost),
        .get("encoded CR LF", 400, target: "/api/a%0d%0aSet-Cookie:x", ourHost),
        HostileRequest("raw control character", 400, "GET /api/a\u{01}b HTTP/1.1\r\n\(ourHost)\r\n\r\n"),
        // Request smuggling shapes (CVE-2025-64484 and the classic CL.TE / TE.CL family).
        HostileRequest(
            "Content-Length and Transfer-Encoding", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        HostileRequest(
            "two Content-Lengths", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
        HostileRequest(
            "Transfer-Encoding chunked, identity", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n"),
        HostileRequest(
            "Transfer-Encoding gzip, chunked", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
        HostileRequest(
            "Transfer-Encoding identity, chunked", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n"),
        // Only spaces and tabs are whitespace around a list element (RFC 9110 §5.6.3): a no-break space after
        // `chunked` makes an unknown coding, never `chunked`.
        HostileRequest(
            "Transfer-Encoding chunked with a no-break space", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nTransfer-Encoding: chunked\u{A0}\r\n\r\n0\r\n\r\n"),
        HostileRequest(
            "Transfer-Encoding on HTTP/1.0", 400,
            "POST /api/x HTTP/1.0\r\n\(ourHost)\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        .get("obsolete line folding", 400, ourHost, "X-Folded: a", " b"),
        // Connection may not name what the proxy decides itself (SPEC §8): each would drop the proxy's own field
        // from the message it checked — framing above all (request smuggling), then Host, the token, the id.
        .get("Connection: content-length", 400, ourHost, "Connection: content-length"),
        .get("Connection: Transfer-Encoding", 400, ourHost, "Connection: Transfer-Encoding"),
        .get("Connection: host, in a list", 400, ourHost, "Connection: keep-alive, host"),
        .get("Connection: authorization", 400, ourHost, "Connection: \tAuthorization "),
        .get("Connection: x-request-id", 400, ourHost, "Connection: x-request-id"),
        .get("Connection: x-bearer-proxy-key", 400, ourHost, "Connection: X-Bearer-Proxy-Key"),
        .get("Connection: proxy-authorization", 400, ourHost, "Connection: close", "Connection: proxy-authorization"),
        .get("Content-Length not a number", 400, ourHost, "Content-Length: +5"),
        .get("space before colon", 400, ourHost, "Authorization : Bearer x"),
        // Header-name variants a CGI-style backend would normalise to a stripped header.
        .get("Proxy_Authorization", 400, ourHost, "Proxy_Authorization: Bearer x"),
        .get("Transfer_Encoding", 400, ourHost, "Transfer_Encoding: chunked"),
        .get("Content_Length", 400, ourHost, "Content_Length: 10"),
        .get("X_Bearer_Proxy_Key", 400, ourHost, "X_Bearer_Proxy_Key: guess"),
        .get("X_Forwarded_For", 400, ourHost, "X_Forwarded_For: 10.0.0.1"),
        .get(
            "authorization_ in upper case", 400, ourHost, "AUTHORIZATION_: x".replacingOccurrences(of: "_:", with: ":"),
            "Proxy_Connection: close"),
        // Every field the proxy checks, sets or removes, spelled with `_` (#21 item 4): not only a fixed list.
        .get("X_HTTP_Method_Override", 400, ourHost, "X_HTTP_Method_Override: DELETE"),
        .get("x_http_method", 400, ourHost, "x_http_method: DELETE"),
        .get("X_Method_Override", 400, ourHost, "X_Method_Override: DELETE"),
        .get("Sec_Fetch_Site", 400, ourHost, "Sec_Fetch_Site: cross-site"),
        .get("Access_Control_Request_Method", 400, ourHost, "Access_Control_Request_Method: PUT"),
        .get("Keep_Alive", 400, ourHost, "Keep_Alive: timeout=5"),
        .get("X_Request_Id", 400, ourHost, "X_Request_Id: forged"),
        .get("X_Forwarded_Prefix (any X-Forwarded-*)", 400, ourHost, "X_FORWARDED_PREFIX: /admin"),
        .get("x_forwarded_host", 400, ourHost, "x_forwarded_host: evil.example"),
        // A field the guard decides on, repeated (#21 item 5): neither "first wins" nor "last wins" is safe.
        .get(
            "two Origins, foreign first", 400, ourHost, "Origin: https://evil.example", "Origin: http://localhost:3000"),
        .get(
            "two Origins, allowed first", 400, ourHost, "Origin: http://localhost:3000", "Origin: https://evil.example"),
        .get("two equal Origins", 400, ourHost, "Origin: http://localhost:3000", "Origin: http://localhost:3000"),
        .get("two Sec-Fetch-Site", 400, ourHost, "Sec-Fetch-Site: cross-site", "Sec-Fetch-Site: same-origin"),
        .get("two Sec-Fetch-Site, benign first", 400, ourHost, "sec-fetch-site: none", "Sec-Fetch-Site: cross-site"),
        HostileRequest(
            "preflight with two request methods", 400,
            "OPTIONS /api/x HTTP/1.1\r\n\(ourHost)\r\nOrigin: http://localhost:3000\r\n"
                + "Access-Control-Request-Method: GET\r\nAccess-Control-Request-Method: DELETE\r\n\r\n",
            method: "OPTIONS"),
        // Any Transfer-Encoding field counts, empty or not (#21 item 6).
        HostileRequest(
            "empty Transfer-Encoding beside Content-Length", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nContent-Length: 5\r\nTransfer-Encoding: \r\n\r\nhello",
            method: "POST"),
        HostileRequest(
            "blank Transfer-Encoding before Content-Length", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nTransfer-Encoding:  \t \r\nContent-Length: 5\r\n\r\nhello",
            method: "POST"),
        HostileRequest(
            "empty Transfer-Encoding alone", 400,
            "POST /api/x HTTP/1.1\r\n\(ourHost)\r\nTransfer-Encoding:\r\n\r\n", method: "POST"),
        HostileRequest(
            "empty Transfer-Encoding on HTTP/1.0", 400,
            "POST /api/x HTTP/1.0\r\n\(ourHost)\r\nTransfer-Encoding: \r\nContent-Length: 5\r\n\r\nhello",
            method: "POST"),
        // Size limits.
        .get("request target over 8 KiB", 414, target: "/api/" + String(repeating: "a", count: 9000), ourHost),
        HostileRequest(
            "over 100 header fields", 431,
            "GET /api/x HTTP/1.1\r\n\(ourHost)\r\n" + (1...120).map { "X-H\($0): v\r\n" }.joined() + "\r\n"),
        .get("one 40 KiB header", 431, ourHost, "X-Big: " + String(repeating: "b", count: 40 * 1024)),
        .get(
            "header section over the parser's limit", 431, ourHost,
            "X-Huge: " + String(repeating: "h", count: 100 * 1024)),
    ]

    @Test("each hostile request gets its status; upstream and token provider are never reached", arguments: cases)
    func hostile(_ request: HostileRequest) async throws {
        try await ProxyHarness.with(
            upstream: { _ in .echo },
            configuration: #""allowedHosts": ["proxy.internal"], "allowedOrigins": ["http://localhost:3000"]"#
        ) { proxy, upstream in
            let raw = request.raw.replacingOccurrences(of: "{HOST}", with: "127.0.0.1:\(proxy.port)")
            let responses = try await TestClient.raw(
                port: proxy.port, text: raw, expectedResponses: 1, requestMethods: [request.method])
            let response = try #require(responses.first)
            #expect(Int(response.status.code) == request.status, "\(response.bodyText)")
            if response.status.code >= 400 {
                #expect(response.header("content-type") == "application/problem+json")
                // RFC 9457 §3.1.4: the body's status is the response's.
                #expect(try response.jsonObject()["status"] as? Int == request.status)
            }
            #expect(upstream.requests.isEmpty, "the upstream was reached")
            #expect(proxy.proxy.tokens.cachedToken(for: ScopeSet(["api://api/Read"])) == nil, "a token was obtained")
        }
    }

    @Test(
        "a client's own X-Tenant, X-Debug-Token and X-Forwarded-* never reach the upstream: the route's compiled rules do"
    )
    func routeRulesOverrideTheClient() async throws {
        try await ProxyHarness.with(
            upstream: { _ in .echo },
            route: #""forwardedHeaders": true, "headers": {"set": {"X-Tenant": "t1"}, "remove": ["X-Debug-Token"]}"#
        ) { proxy, upstream in
            let raw =
                "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nX-Tenant: evil\r\nx-tenant: evil2\r\n"
                + "X-Debug-Token: leak\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Host: evil.example\r\n"
                + "X-Forwarded-Proto: https\r\n\r\n"
            let responses = try await TestClient.raw(port: proxy.port, text: raw, expectedResponses: 1)
            let echo = try #require(try responses.first?.echo())
            #expect(echo.headerValues("x-tenant") == ["t1"])
            #expect(echo.headerValues("x-debug-token").isEmpty)
            #expect(echo.headerValues("x-forwarded-for") == ["127.0.0.1"])
            #expect(echo.headerValues("x-forwarded-host") == ["127.0.0.1:\(proxy.port)"])
            #expect(echo.headerValues("x-forwarded-proto") == ["http"])
            #expect(upstream.requests.count == 1)
        }
    }

    @Test(
        "a field spelled with `_` for one the route sets or removes is refused; other `_` names pass (#21 item 4)",
        arguments: [("X_Tenant: evil", 400), ("x_debug_token: 1", 400), ("X_TENANT: evil", 400), ("X_Other: 1", 200)])
    func routeHeaderSpellings(field: String, status: Int) async throws {
        try await ProxyHarness.with(
            upstream: { _ in .echo }, route: #""headers": {"set": {"X-Tenant": "t1"}, "remove": ["X-Debug-Token"]}"#
        ) { proxy, upstream in
            let raw = "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\(field)\r\n\r\n"
            let responses = try await TestClient.raw(port: proxy.port, text: raw, expectedResponses: 1)
            #expect(responses.first.map { Int($0.status.code) } == status, "\(field)")
            #expect(upstream.requests.count == (status == 200 ? 1 : 0), "\(field)")
        }
    }

    @Test(
        "the names that are ours pass, in any case and with any port",
        arguments: ["localhost", "LOCALHOST:1234", "127.0.0.1", "[::1]:8080", "proxy.internal", "Proxy.Internal:80"])
    func allowedHosts(_ host: String) async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }, configuration: #""allowedHosts": ["proxy.internal"]"#) {
            proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x", headers: [("Host", host)])
            #expect(response.status == .ok)
            #expect(upstream.requests.count == 1)
        }
    }

    @Test("absolute-form with our own authority is served as origin-form")
    func absoluteFormOurs() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, _ in
            let responses = try await TestClient.raw(
                port: proxy.port,
                text: "GET http://localhost:\(proxy.port)/api/x?q=1 HTTP/1.1\r\nHost: localhost:\(proxy.port)\r\n\r\n",
                expectedResponses: 1)
            #expect(try responses.first?.echo().uri == "/base/x?q=1")
        }
    }
}

extension HostileRequest {
    /// The same request with another method on its request line.
    func replacingMethod(_ method: String) -> HostileRequest {
        HostileRequest(name, status, method + raw.drop(while: { $0 != " " }), method: method)
    }
}
