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

@Suite("Flow options: extra parameters, client capabilities, command timeout")
struct FlowOptionsTests {
    @Test("extraParameters are sent with token requests; clientCapabilities become an xms_cc claims request")
    func extraParametersAndCapabilities() async throws {
        try await withIdentityProvider { provider in
            let account =
                #"{ "flow": "refresh-token", "authority": "\#(provider.authority)", "#
                + #""clientId": "\#(FakeIdentityProvider.Client.publicClientID)", "#
                + #""refreshTokenEnv": "\#(TestAccounts.refreshTokenVariable)", "#
                + #""extraParameters": { "x-tenant-hint": "contoso" }, "clientCapabilities": ["cp1"] }"#
            try await withUpstream({ _ in .echo }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]", account: account,
                    environment: TestAccounts.environment(provider)
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(response.status == .ok)
                    let request = try #require(provider.tokenRequests.last)
                    #expect(request.parameters["x-tenant-hint"] == "contoso")
                    let claims = try #require(request.claims)
                    let object = try #require(
                        try JSONSerialization.jsonObject(with: Data(claims.utf8)) as? [String: Any])
                    let accessToken = try #require(object["access_token"] as? [String: Any])
                    let capabilities = try #require(accessToken["xms_cc"] as? [String: Any])
                    #expect(capabilities["values"] as? [String] == ["cp1"])
                }
            }
        }
    }

    @Test("capabilities are merged into a claims challenge, as MSAL merges them")
    func claimsMerge() throws {
        let merged = try #require(
            ClaimsRequest.merged(
                challenge: #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#, capabilities: ["cp1"]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(merged.utf8)) as? [String: Any])
        let accessToken = try #require(object["access_token"] as? [String: Any])
        #expect(accessToken["acrs"] != nil)
        #expect((accessToken["xms_cc"] as? [String: Any])?["values"] as? [String] == ["cp1"])
        #expect(ClaimsRequest.merged(challenge: nil, capabilities: []) == nil)
    }

    @Test("a command that does not finish in time is stopped and answered 503, the upstream untouched")
    func commandTimeout() async throws {
        // The command would run for 5 minutes; the bound below (a minute, wide enough for a loaded CI machine, where
        // this once took 23 s) only has to tell "stopped at its 0.5 s limit" from "ran to its end".
        let account = #"{ "flow": "command", "command": ["sleep", "300"], "timeoutSeconds": 0.5 }"#
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(
                routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]", account: account
            ) { proxy in
                let started = ContinuousClock.now
                let response = try await TestClient.send(port: proxy.port, uri: "/api/x", timeout: .seconds(60))
                #expect(response.status == .serviceUnavailable)
                #expect((try response.jsonObject()["detail"] as? String)?.contains("did not finish") == true)
                #expect(ContinuousClock.now - started < .seconds(60))
                #expect(upstream.requests.isEmpty)
            }
        }
    }
}
