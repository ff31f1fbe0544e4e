import Foundation
import Logging
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

/// The `managed-identity` flow against a fake Azure managed identity endpoint of either protocol (App Service's
/// `IDENTITY_ENDPOINT` with its secret header, and the Instance Metadata Service), through a real proxy.
@Suite("Managed identity")
struct ManagedIdentityTests {
    /// The secret App Service puts in `IDENTITY_HEADER` (a test value that must show up nowhere).
    static let secret = "identity-header-0f5b8c2e-never-shown"
    static let userAssigned = FakeManagedIdentity.UserAssigned(
        clientID: "11112222-bbbb-3333-cccc-4444dddd5555", objectID: "aaaa0000-1111-2222-3333-444455556666",
        resourceID: "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/"
            + "userAssignedIdentities/proxy")

    /// The two protocols, as test arguments.
    enum EndpointKind: String, CaseIterable, Sendable {
        case appService = "app-service"
        case imds

        var kind: FakeManagedIdentity.Kind {
            switch self {
            case .appService: .appService(secret: ManagedIdentityTests.secret)
            case .imds: .imds
            }
        }

        /// The account for `fake` with `extra` members, and the environment the platform gives the process: App
        /// Service's two variables (the protocol is then detected), or none (IMDS, at the configured endpoint).
        func setup(_ fake: FakeManagedIdentity, extra: String = "") -> (account: String, environment: [String: String])
        {
            switch self {
            case .appService:
                (
                    #"{ "flow": "managed-identity"\#(extra) }"#,
                    ["IDENTITY_ENDPOINT": fake.endpoint, "IDENTITY_HEADER": ManagedIdentityTests.secret]
                )
            case .imds:
                (#"{ "flow": "managed-identity", "protocol": "imds", "endpoint": "\#(fake.endpoint)"\#(extra) }"#, [:])
            }
        }

        /// The query parameter naming a user-assigned identity by its resource id.
        var resourceIDParameter: String { self == .appService ? "mi_res_id" : "msi_res_id" }
        var apiVersion: String { self == .appService ? "2019-08-01" : "2018-02-01" }
    }

    /// A proxy with `account` whose routes `/a` and `/b` reach an echo upstream with `api://a/.default` and
    /// `https://b.example.com/.default`.
    static func withProxy<T>(
        account: String, environment: [String: String], logger: Logger = ProxyHarness.silentLogger,
        _ body: (ProxyHarness, FakeUpstream) async throws -> T
    ) async throws -> T {
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = [
                route("/a", to: upstream, scopes: ["api://a/.default"]),
                route("/b", to: upstream, scopes: ["https://b.example.com/.default"]),
            ]
            return try await ProxyHarness.with(
                routes: "[" + routes.joined(separator: ", ") + "]", account: account, environment: environment,
                logger: logger
            ) { proxy in try await body(proxy, upstream) }
        }
    }

    @Test(
        "each protocol end to end: the upstream gets the endpoint's token; the endpoint saw what it checks",
        arguments: EndpointKind.allCases)
    func endToEnd(protocol kind: EndpointKind) async throws {
        try await withManagedIdentity(kind.kind) { fake in
            let (account, environment) = kind.setup(fake)
            try await Self.withProxy(account: account, environment: environment) { proxy, upstream in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok, "\(response.bodyText)")
                #expect(try response.echo().header("authorization") == "Bearer mi-token-1-system")
                let second = try await TestClient.send(port: proxy.port, uri: "/b/y")
                #expect(try second.echo().header("authorization") == "Bearer mi-token-2-system")
                #expect(upstream.requests.count == 2)
            }
            let requests = fake.requests
            #expect(requests.map(\.status) == [200, 200])
            #expect(requests.map { $0.query["resource"] } == ["api://a", "https://b.example.com"])
            for request in requests {
                #expect(request.method == .GET)
                #expect(request.query["api-version"] == kind.apiVersion)
                #expect(Set(request.query.keys) == ["api-version", "resource"], "system-assigned: no identity sent")
                #expect(!request.headers.contains(name: "x-forwarded-for"))
                switch kind {
                case .appService:
                    #expect(request.headers.first(name: "x-identity-header") == Self.secret)
                    #expect(!request.headers.contains(name: "metadata"))
                case .imds:
                    #expect(request.headers.first(name: "metadata") == "true")
                    #expect(!request.headers.contains(name: "x-identity-header"))
                }
            }
        }
    }

    /// A user-assigned identity, by each of its ids.
    enum UserAssignedID: String, CaseIterable, Sendable {
        case clientId, objectId, resourceId

        var value: String {
            switch self {
            case .clientId: ManagedIdentityTests.userAssigned.clientID
            case .objectId: ManagedIdentityTests.userAssigned.objectID
            case .resourceId: ManagedIdentityTests.userAssigned.resourceID
            }
        }

        func parameter(_ kind: EndpointKind) -> String {
            switch self {
            case .clientId: "client_id"
            case .objectId: "object_id"
            case .resourceId: kind.resourceIDParameter
            }
        }
    }

    @Test(
        "a user-assigned identity is asked for by the id configured, in the protocol's parameter",
        arguments: EndpointKind.allCases, UserAssignedID.allCases)
    func userAssigned(protocol kind: EndpointKind, id: UserAssignedID) async throws {
        try await withManagedIdentity(kind.kind, systemAssigned: false, userAssigned: [Self.userAssigned]) { fake in
            let (account, environment) = kind.setup(fake, extra: #", "\#(id.rawValue)": "\#(id.value)""#)
            try await Self.withProxy(account: account, environment: environment) { proxy, _ in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok, "\(response.bodyText)")
                let expected = "Bearer mi-token-1-\(Self.userAssigned.clientID)"
                #expect(try response.echo().header("authorization") == expected)
            }
            let request = try #require(fake.requests.first)
            #expect(request.query[id.parameter(kind)] == id.value)
            #expect(request.query.count == 3, "\(request.query)")
        }
    }

    @Test(
        "an identity the resource does not have: 500 naming the endpoint's refusal and what to check",
        arguments: EndpointKind.allCases, [false, true])
    func identityNotFound(protocol kind: EndpointKind, userAssigned: Bool) async throws {
        try await withManagedIdentity(kind.kind, systemAssigned: false) { fake in
            let extra = userAssigned ? #", "clientId": "\#(Self.userAssigned.clientID)""# : ""
            let (account, environment) = kind.setup(fake, extra: extra)
            try await Self.withProxy(account: account, environment: environment) { proxy, upstream in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .internalServerError)
                let detail = try response.problemDetail()
                #expect(
                    detail.contains("the managed identity endpoint \(fake.endpoint) refused the request"), "\(detail)")
                #expect(detail.contains("HTTP 400"), "\(detail)")
                #expect(detail.contains("Identity not found"), "\(detail)")
                let hint = userAssigned ? "user-assigned identity is assigned" : "system-assigned identity is enabled"
                #expect(detail.contains(hint), "\(detail)")
                #expect(upstream.requests.isEmpty)
            }
            #expect(fake.requests.map(\.status) == [400])
        }
    }

    @Test("a wrong IDENTITY_HEADER is refused by the endpoint: 500 saying so, quoting neither value")
    func wrongHeader() async throws {
        try await withManagedIdentity(.appService(secret: Self.secret)) { fake in
            let wrong = "stale-identity-header-from-another-process"
            let environment = ["IDENTITY_ENDPOINT": fake.endpoint, "IDENTITY_HEADER": wrong]
            try await Self.withProxy(account: #"{ "flow": "managed-identity" }"#, environment: environment) {
                proxy, upstream in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .internalServerError)
                let detail = try response.problemDetail()
                #expect(detail.contains("HTTP 401"), "\(detail)")
                #expect(detail.contains("IDENTITY_HEADER"), "\(detail)")
                #expect(!response.bodyText.contains(wrong))
                #expect(!response.bodyText.contains(Self.secret))
                #expect(upstream.requests.isEmpty)
            }
            #expect(fake.requests.map(\.status) == [401])
        }
    }

    @Test("IMDS without the Metadata header refuses; the flow always sends it, so the fake's check is what refused")
    func metadataHeaderRequired() async throws {
        try await withManagedIdentity(.imds) { fake in
            // What a request without the header gets (a forwarded browser request, say), straight from the fake.
            let direct = try await TestClient.send(
                port: fake.port,
                uri: FakeManagedIdentity.imdsPath + "?api-version=2018-02-01&resource=api%3A%2F%2Fa")
            #expect(direct.status == .badRequest)
            #expect(direct.bodyText.contains("Required metadata header not specified"))
        }
    }

    @Test(
        "the endpoint down: 503 with Retry-After naming the endpoint, never the header value",
        arguments: EndpointKind.allCases)
    func endpointDown(protocol kind: EndpointKind) async throws {
        let refusing = try RefusingPort()
        let endpoint = "http://127.0.0.1:\(refusing.port)/msi/token"
        let (account, environment): (String, [String: String]) =
            switch kind {
            case .appService:
                (#"{ "flow": "managed-identity" }"#, ["IDENTITY_ENDPOINT": endpoint, "IDENTITY_HEADER": Self.secret])
            case .imds: (#"{ "flow": "managed-identity", "protocol": "imds", "endpoint": "\#(endpoint)" }"#, [:])
            }
        try await Self.withProxy(account: account, environment: environment) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
            #expect(response.status == .serviceUnavailable)
            #expect(response.header("retry-after") == "\(ManagedIdentityAnswer.retryAfterSeconds)")
            let detail = try response.problemDetail()
            #expect(detail.contains("the managed identity endpoint \(endpoint)"), "\(detail)")
            #expect(!response.bodyText.contains(Self.secret))
            #expect(!response.headers.contains { $0.value.contains(Self.secret) })
            #expect(upstream.requests.isEmpty)
            #expect(try await TestClient.send(port: proxy.port, uri: "/-/health").status == .ok)
        }
        _ = refusing
    }

    @Test("throttled or failing endpoint: 503 with the endpoint's Retry-After", arguments: [429, 500, 503])
    func endpointFailing(status: Int) async throws {
        try await withManagedIdentity(.imds) { fake in
            fake.force(.status(status, retryAfter: 7))
            let (account, environment) = EndpointKind.imds.setup(fake)
            try await Self.withProxy(account: account, environment: environment) { proxy, _ in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .serviceUnavailable)
                #expect(response.header("retry-after") == "7")
                #expect(try response.problemDetail().contains("answered HTTP \(status)"))
            }
        }
    }

    @Test("a token is cached, and refreshed from the endpoint past half its lifetime", arguments: EndpointKind.allCases)
    func cachedAndRefreshed(protocol kind: EndpointKind) async throws {
        let clock = TestClock()
        try await withManagedIdentity(kind.kind, lifetime: 3600, now: { clock.now }) { fake in
            let (account, environment) = kind.setup(fake)
            let routes = #"[{ "prefix": "/a", "upstream": "https://a.example", "scopes": ["api://a/.default"] }]"#
            try await SignInHarness.with(
                account: account, routes: routes, environment: environment, now: { clock.now }
            ) { runtime in
                let scopes = ScopeSet(["api://a/.default"])
                let first = try await runtime.tokens.accessTokenWithinLimit(for: scopes)
                #expect(first.value == "mi-token-1-system")
                #expect(first.expiresOn == clock.now.addingTimeInterval(3600))
                #expect(try await runtime.tokens.accessTokenWithinLimit(for: scopes).value == first.value)
                #expect(fake.tokenCount == 1, "the second request was served from the cache")
                clock.advance(1700)
                #expect(await runtime.tokens.refreshDueTokens() == 0, "not due before half its lifetime")
                clock.advance(200)
                #expect(await runtime.tokens.refreshDueTokens() == 1)
                #expect(fake.tokenCount == 2)
                #expect(runtime.tokens.cachedToken(for: scopes)?.value == "mi-token-2-system")
            }
        }
    }

    @Test("status names the flow, the protocol and the identity, and never the header")
    func status() async throws {
        try await withManagedIdentity(.appService(secret: Self.secret), userAssigned: [Self.userAssigned]) { fake in
            let (account, environment) = EndpointKind.appService.setup(
                fake, extra: #", "clientId": "\#(Self.userAssigned.clientID)""#)
            try await Self.withProxy(account: account, environment: environment) { proxy, _ in
                let response = try await TestClient.send(port: proxy.port, uri: "/-/status")
                let document = try response.jsonObject()
                let account = try #require(document["account"] as? [String: Any])
                #expect(account["flow"] as? String == "managed-identity")
                #expect(account["signedIn"] as? Bool == true)
                let identity = try #require(account["identity"] as? [String: Any])
                #expect(identity["name"] as? String == "managed identity (app-service)")
                #expect(identity["username"] as? String == "user-assigned, client id \(Self.userAssigned.clientID)")
                #expect(!response.bodyText.contains(Self.secret))
            }
            try await SignInHarness.with(account: account, routes: Self.defaultRoutes, environment: environment) {
                runtime in
                let text = StatusReport(account: runtime).text
                #expect(
                    text.hasPrefix(
                        "account: managed-identity — managed identity (app-service), user-assigned, client id "
                            + Self.userAssigned.clientID), "\(text)")
            }
        }
    }

    static let defaultRoutes = #"[{ "prefix": "/a", "upstream": "https://a.example", "scopes": ["api://a/.default"] }]"#

    @Test("the identity header appears in no log line (trace level), problem, status or metrics")
    func headerNeverShown() async throws {
        let store = CapturingLogHandler.Store()
        var output: [String] = []
        try await withManagedIdentity(.appService(secret: Self.secret)) { fake in
            let (account, environment) = EndpointKind.appService.setup(fake)
            try await Self.withProxy(
                account: account, environment: environment, logger: CapturingLogHandler.logger(into: store)
            ) { proxy, upstream in
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
                fake.force(.status(503, retryAfter: 1))
                let failed = try await TestClient.send(port: proxy.port, uri: "/b/x")
                #expect(failed.status == .serviceUnavailable)
                for response in [failed] {
                    output.append(response.bodyText)
                    output += response.headers.map { "\($0.name): \($0.value)" }
                }
                for uri in ["/-/status", "/-/metrics"] {
                    output.append(try await TestClient.send(port: proxy.port, uri: uri).bodyText)
                }
                let forwarded = upstream.requests.flatMap { $0.head.headers.map { "\($0.name): \($0.value)" } }
                #expect(!forwarded.contains { $0.contains(Self.secret) }, "the header reached the upstream")
            }
        }
        // And a refusing endpoint: the connection failure's problem.
        let refusing = try RefusingPort()
        let environment = [
            "IDENTITY_ENDPOINT": "http://127.0.0.1:\(refusing.port)/msi/token", "IDENTITY_HEADER": Self.secret,
        ]
        try await Self.withProxy(
            account: #"{ "flow": "managed-identity" }"#, environment: environment,
            logger: CapturingLogHandler.logger(into: store)
        ) { proxy, _ in
            output.append(try await TestClient.send(port: proxy.port, uri: "/a/x").bodyText)
        }
        _ = refusing
        #expect(!store.all.isEmpty, "the scenario logged nothing; the scan would prove nothing")
        // Booleans, so that a failure does not print the secret it found.
        let inLogs = store.all.contains { $0.contains(Self.secret) }
        let inOutput = output.contains { $0.contains(Self.secret) }
        #expect(!inLogs, "the identity header appeared in the logs")
        #expect(!inOutput, "the identity header appeared in a problem, the status or the metrics")
    }

    @Test("each form is read into its settings; the protocol is detected from IDENTITY_ENDPOINT")
    func parsesEachForm() throws {
        func settings(_ members: String, _ environment: [String: String] = [:]) throws -> ManagedIdentityAccount? {
            let json = ConfigurationFixture.account(
                #"{"flow": "managed-identity"\#(members)}"#, routes: [AccountProblemTests.defaultScopeRoute])
            guard
                case .managedIdentity(let account) = try ConfigurationFixture.parse(json, environment: environment)
                    .account.settings
            else { return nil }
            return account
        }
        let appService = ["IDENTITY_ENDPOINT": "http://127.0.0.1:41000/msi/token", "IDENTITY_HEADER": Self.secret]
        let imds = ManagedIdentityAccount.imdsEndpoint
        #expect(try settings("") == ManagedIdentityAccount(endpointProtocol: .imds, endpoint: imds))
        #expect(
            try settings("", appService)
                == ManagedIdentityAccount(endpointProtocol: .appService, endpoint: "http://127.0.0.1:41000/msi/token"))
        #expect(
            try settings(#", "protocol": "imds""#, appService)
                == ManagedIdentityAccount(endpointProtocol: .imds, endpoint: imds))
        #expect(
            try settings(#", "protocol": "app-service", "endpoint": "https://mi.example.com/token""#, appService)
                == ManagedIdentityAccount(endpointProtocol: .appService, endpoint: "https://mi.example.com/token"))
        #expect(
            try settings(#", "endpoint": "http://169.254.169.254/x", "objectId": "\#(Self.userAssigned.objectID)""#)
                == ManagedIdentityAccount(
                    endpointProtocol: .imds, endpoint: "http://169.254.169.254/x",
                    identity: .objectId(Self.userAssigned.objectID)))
        #expect(
            try settings(#", "clientId": "\#(Self.userAssigned.clientID)""#)?.identity
                == .clientId(Self.userAssigned.clientID))
        #expect(
            try settings(#", "resourceId": "\#(Self.userAssigned.resourceID)""#)?.identity
                == .resourceId(Self.userAssigned.resourceID))
    }

    @Test("configuration problems are listed together, each at its JSON path, quoting no header")
    func everyProblemAtOnce() {
        let json = ConfigurationFixture.account(
            #"{"flow": "managed-identity", "protocol": "app-service", "clientId": "x", "resourceId": "/y", "#
                + #""endpoit": "http://a"}"#,
            routes: [#"{"prefix": "/a", "upstream": "https://a.example.com", "scopes": ["api://a/Read"]}"#])
        let problems = ConfigurationFixture.problems(json, environment: [:]).map { "\($0.path): \($0.message)" }
        #expect(
            Set(problems) == [
                #"account.endpoit: unknown key (did you mean "endpoint"?)"#,
                #"account: give at most one of "clientId", "objectId" and "resourceId" (one user-assigned identity)"#,
                "account.protocol: the app-service protocol needs environment variable IDENTITY_ENDPOINT (the platform "
                    + #"sets it) or "endpoint""#,
                "account.protocol: environment variable IDENTITY_HEADER is not set",
                #"routes[0].scopes: the managed-identity flow takes exactly one scope, "{resource}/.default" "#
                    + #"(e.g. ["https://graph.microsoft.com/.default"])"#,
            ], "\(problems)")
    }

    /// 200 bodies and the lifetime and refresh time (seconds after issue) they give, or nil for a 503.
    static let answers: [(body: String, expiresIn: TimeInterval?, refreshIn: TimeInterval?)] = [
        // App Service: expires_on only, a string of epoch seconds (issue is at 1_800_000_000).
        (#"{"access_token": "t", "expires_on": "1800003600", "token_type": "Bearer"}"#, 3600, 1800),
        (#"{"access_token": "t", "expires_on": 1800003600}"#, 3600, 1800),
        // IMDS: expires_in wins over expires_on (relative, so independent of the endpoint's clock).
        (#"{"access_token": "t", "expires_in": "600", "expires_on": "1900000000"}"#, 600, 300),
        (#"{"access_token": "t", "expires_in": 7200, "refresh_in": 1000}"#, 7200, 1000),
        // An expires_on already past is a token that expires now, never one dated back.
        (#"{"access_token": "t", "expires_on": "1700000000"}"#, 0, 0),
        (#"{"access_token": "t"}"#, nil, nil),
        (#"{"access_token": "t", "expires_on": "soon"}"#, nil, nil),
        (#"{"access_token": "", "expires_in": 60}"#, nil, nil),
        ("not json", nil, nil),
    ]

    @Test("a 200's lifetime: expires_in, else expires_on as a number or a string; none or no token is a 503")
    func decodesAnswers() throws {
        let issued = Date(timeIntervalSince1970: 1_800_000_000)
        let request = TokenRequest(scopes: ScopeSet(["api://a/.default"]))
        let answer = ManagedIdentityAnswer(endpoint: "http://127.0.0.1:1/msi/token", userAssigned: false)
        for (body, expiresIn, refreshIn) in Self.answers {
            do {
                let token = try answer.token(
                    status: 200, headers: [:], body: Data(body.utf8), for: request, at: issued)
                #expect(token.value == "t", "\(body)")
                #expect(token.expiresOn.timeIntervalSince(issued) == expiresIn, "\(body)")
                #expect(token.refreshOn.timeIntervalSince(issued) == refreshIn, "\(body)")
            } catch {
                #expect(expiresIn == nil, "\(body): \(error)")
                guard case .providerUnavailable(let reason, _) = error else {
                    Issue.record("\(body): expected a 503, got \(error)")
                    continue
                }
                let prefix = "the managed identity endpoint http://127.0.0.1:1/msi/token answered "
                #expect(reason.hasPrefix(prefix), "\(reason)")
            }
        }
    }

    @Test("the request URL: the resource before /.default, each id in its protocol's parameter, form-encoded")
    func requestURL() throws {
        let cases: [(ManagedIdentityAccount, String)] = [
            (
                ManagedIdentityAccount(endpointProtocol: .imds, endpoint: ManagedIdentityAccount.imdsEndpoint),
                ManagedIdentityAccount.imdsEndpoint + "?api-version=2018-02-01&resource=https%3A%2F%2Fvault.azure.net"
            ),
            (
                ManagedIdentityAccount(
                    endpointProtocol: .appService, endpoint: "http://127.0.0.1:41000/msi/token",
                    identity: .resourceId("/subscriptions/s/x")),
                "http://127.0.0.1:41000/msi/token?api-version=2019-08-01&resource=https%3A%2F%2Fvault.azure.net"
                    + "&mi_res_id=%2Fsubscriptions%2Fs%2Fx"
            ),
            (
                ManagedIdentityAccount(
                    endpointProtocol: .imds, endpoint: ManagedIdentityAccount.imdsEndpoint,
                    identity: .resourceId("/subscriptions/s/x")),
                ManagedIdentityAccount.imdsEndpoint
                    + "?api-version=2018-02-01&resource=https%3A%2F%2Fvault.azure.net&msi_res_id=%2Fsubscriptions%2Fs%2Fx"
            ),
        ]
        let resource = try #require(ScopeSet(["https://vault.azure.net/.default"]).resource)
        for (account, expected) in cases {
            #expect(ManagedIdentityFlow.url(for: resource, account: account) == expected)
        }
    }
}
