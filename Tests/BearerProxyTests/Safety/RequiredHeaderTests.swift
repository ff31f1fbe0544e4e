import Foundation
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

/// #26 item 3: `requireHeader`, globally and per route. A request without it gets 403 problem+json before any token
/// is fetched, nothing is forwarded, and the connection closes (every refusal of a head does, #28).
@Suite("requireHeader: a header every request to a route must carry, checked before the token")
struct RequiredHeaderTests {
    static let global = #""requireHeader": { "name": "X-Requested-By" }"#
    static let route = #""requireHeader": { "name": "X-Tenant", "value": "contoso" }"#

    @Test("missing, empty, repeated or wrong: 403 before any token; both present and right: forwarded with them")
    func enforced() async throws {
        try await ProxyHarness.with(
            upstream: { _ in .echo }, route: Self.route, configuration: Self.global
        ) { proxy, upstream in
            let refused: [(String, [(String, String)])] = [
                ("neither", []),
                ("only the global one", [("X-Requested-By", "cli")]),
                ("only the route's", [("X-Tenant", "contoso")]),
                ("the route's with another value", [("X-Requested-By", "cli"), ("X-Tenant", "fabrikam")]),
                ("the route's with a longer value", [("X-Requested-By", "cli"), ("X-Tenant", "contoso2")]),
                // A value is a secret compared byte for byte: only field names ignore case (RFC 9110 §5.1).
                ("the route's in another case", [("X-Requested-By", "cli"), ("X-Tenant", "Contoso")]),
                ("the route's in capitals", [("X-Requested-By", "cli"), ("X-Tenant", "CONTOSO")]),
                ("the global one empty", [("X-Requested-By", ""), ("X-Tenant", "contoso")]),
                ("the global one twice", [("X-Requested-By", "a"), ("X-Requested-By", "b"), ("X-Tenant", "contoso")]),
                ("an underscore spelling", [("X_Requested_By", "cli"), ("X-Tenant", "contoso")]),
            ]
            for (name, headers) in refused {
                let connection = try await TestConnection.open(port: proxy.port)
                let response = try await connection.send(uri: "/api/x", headers: headers)
                #expect(response.status == .forbidden, "\(name)")
                let problem = try response.jsonObject()
                #expect(problem["type"] as? String == "urn:bearer-proxy:problem:required-header-missing", "\(name)")
                #expect(response.headers.first(name: "content-type") == "application/problem+json", "\(name)")
                try await connection.waitForClose()
            }
            #expect(upstream.requests.isEmpty, "a refused request was forwarded")
            #expect(proxy.proxy.tokens.allTokens.isEmpty, "a token was fetched for a refused request")
            let response = try await TestClient.send(
                port: proxy.port, uri: "/api/x", headers: [("x-requested-by", "cli"), ("X-Tenant", "contoso")])
            #expect(response.status == .ok)
            let echo = try response.echo()
            #expect(echo.header("x-requested-by") == "cli")
            #expect(echo.header("x-tenant") == "contoso")
            // The proxy's own endpoints do not ask for it (probes cannot always send headers).
            #expect(try await TestClient.send(port: proxy.port, uri: "/-/health").status == .ok)
        }
    }

    @Test("requireHeader is read globally and per route; reserved names, bad names and bad values are refused")
    func configuration() throws {
        typealias F = ConfigurationFixture
        let configuration = try F.parse(
            F.document(
                Self.global,
                routes: [
                    #"{ "prefix": "/a", "upstream": "https://a.example", "scopes": ["api://a/R"], \#(Self.route) }"#,
                    #"{ "prefix": "/b", "upstream": "https://b.example", "scopes": ["api://b/R"] }"#,
                ]))
        #expect(
            configuration.routes.routes[0].requiredHeaders == [
                RequiredHeader(name: "X-Requested-By"), RequiredHeader(name: "X-Tenant", value: "contoso"),
            ])
        #expect(configuration.routes.routes[1].requiredHeaders == [RequiredHeader(name: "X-Requested-By")])
        let problems = F.problems(
            F.document(
                #""requireHeader": { "name": "Authorization" }"#,
                routes: [
                    #"{ "prefix": "/a", "upstream": "https://a.example", "scopes": ["api://a/R"], "requireHeader": { "name": "X", "value": " x", "other": 1 } }"#
                ]))
        #expect(
            Set(problems.map(\.path)) == [
                "requireHeader.name", "routes[0].requireHeader.other", "routes[0].requireHeader.value",
            ])
    }
}
