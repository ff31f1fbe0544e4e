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

@Suite("Security: an upstream cannot hold a request past the route's limit")
struct SlowUpstreamTests {
    @Test(
        "interim 1xx responses do not stop the route's clock: 100, 102 or 103 and then silence give 504",
        arguments: [
            "HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 102 Processing\r\n\r\n",
            "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n",
        ])
    func interimThenSilence(raw: String) async throws {
        try await RawUpstream.withProxy(route: #""timeoutSeconds": 0.3"#, answer: { _ in .raw(raw) }) {
            proxy, upstream in
            // The token first: the route's limit also bounds the wait for it, and this test is about the upstream.
            _ = try await proxy.proxy.tokens.accessTokenWithinLimit(for: ScopeSet(["api://api/Read"]))
            let started = ContinuousClock.now
            let response = try await TestClient.send(port: proxy.port, uri: "/api/slow")
            #expect(response.status == .gatewayTimeout)
            #expect(try response.jsonObject()["type"] as? String == "urn:bearer-proxy:problem:upstream-timeout")
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            // The interim answer came from the upstream, so it had the request (recorded on its own loop, perhaps
            // after the 504 under load).
            try await upstream.waitForRequests(1)
        }
    }
}
