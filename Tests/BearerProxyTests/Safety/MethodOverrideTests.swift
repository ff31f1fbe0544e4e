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

/// Method-override headers and `_method` on a route with `methods` (SPEC §9, CWE-650).
@Suite("Security: a method override cannot smuggle a method the route forbids")
struct MethodOverrideTests {
    static let readOnly = #""methods": ["GET", "HEAD"]"#

    @Test(
        "an override naming a forbidden method gets 405 and never reaches the upstream",
        arguments: [
            ("X-HTTP-Method-Override", "DELETE", "/api/x"), ("X-HTTP-Method", "put", "/api/x"),
            ("X-Method-Override", " Patch ", "/api/x"), ("x-http-method-override", "GET, DELETE", "/api/x"),
            ("Accept", "*/*", "/api/x?_method=DELETE"), ("Accept", "*/*", "/api/x?a=1&_method=del%45te"),
            ("Accept", "*/*", "/api/x?_meth%6Fd=POST"),
        ])
    func forbiddenOverride(header: String, value: String, target: String) async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }, route: Self.readOnly) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: target, headers: [(header, value)])
            #expect(response.status == .methodNotAllowed)
            #expect(response.header("allow") == "GET, HEAD")
            #expect(try response.jsonObject()["status"] as? Int == 405)
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("an override naming an allowed method, and overrides on a route without methods, pass")
    func allowedOverride() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }, route: Self.readOnly) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, uri: "/api/x?_method=head", headers: [("X-HTTP-Method-Override", "get")])
            #expect(response.status == .ok)
            #expect(upstream.requests.count == 1)
        }
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, uri: "/api/x", headers: [("X-HTTP-Method-Override", "DELETE")])
            #expect(response.status == .ok)
            #expect(upstream.requests.count == 1)
        }
    }

    @Test("the pure check: every spelling, lists, and values that do not decode")
    func pureCheck() throws {
        let allowed: Set = ["GET"]
        #expect(
            try MethodOverride.forbidden(headers: ["X-Http-Method": "delete"], query: nil, allowed: allowed) == "DELETE"
        )
        #expect(
            try MethodOverride.forbidden(headers: ["X-Method-Override": "GET,,"], query: nil, allowed: allowed) == nil)
        #expect(try MethodOverride.forbidden(headers: [:], query: "_method=%zz", allowed: allowed) == "%ZZ")
        #expect(try MethodOverride.forbidden(headers: [:], query: "x_method=DELETE", allowed: allowed) == nil)
        #expect(try MethodOverride.forbidden(headers: [:], query: "_method", allowed: allowed) == nil)
    }
}
