import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerHTTP
@testable import BearerJSON

private typealias F = ConfigurationFixture

/// `"auth": "on-behalf-of"` and its `onBehalfOf` object: what is read, and every problem at its JSON path.
@Suite("Configuration: on-behalf-of routes")
struct OnBehalfOfConfigurationTests {
    static let account =
        #"{"flow": "client-credentials", "authority": "https://login.microsoftonline.com/contoso.onmicrosoft.com", "#
        + #""clientId": "app", "clientSecretEnv": "SECRET"}"#

    static func document(_ members: String, account: String = account) -> String {
        F.account(account, routes: [#"{"prefix": "/obo", "upstream": "https://api.example.com", \#(members)}"#])
    }

    @Test("the default grant is Entra's jwt-bearer, with the route's scopes; the account's cache has no key for it")
    func defaults() throws {
        let configuration = try F.parse(Self.document(#""auth": "on-behalf-of", "scopes": ["api://down/Read"]"#))
        let route = configuration.routes.routes[0]
        guard case .onBehalfOf(let settings) = route.auth else {
            Issue.record("not on-behalf-of: \(route.auth)")
            return
        }
        #expect(settings == OnBehalfOfSettings(scopes: ScopeSet(["api://down/Read"])))
        #expect(settings.maximumSubjects == 1_000)
        #expect(route.auth.tokenKey == nil)
    }

    @Test("token-exchange reads every key of RFC 8693")
    func tokenExchange() throws {
        let members =
            #""auth": "on-behalf-of", "onBehalfOf": {"grant": "token-exchange", "audience": "https://x", "#
            + #""resource": "https://x/api", "subjectTokenType": "urn:ietf:params:oauth:token-type:jwt", "#
            + #""requestedTokenType": "urn:ietf:params:oauth:token-type:access_token", "#
            + #""actorToken": {"tokenEnv": "SECRET"}, "actorTokenType": "urn:x:actor", "maxSubjects": 5}"#
        let route = try F.parse(Self.document(members)).routes.routes[0]
        guard case .onBehalfOf(let settings) = route.auth else {
            Issue.record("not on-behalf-of: \(route.auth)")
            return
        }
        #expect(settings.grant == .tokenExchange)
        #expect(settings.scopes == ScopeSet([]))
        #expect(settings.audience == "https://x")
        #expect(settings.resource == "https://x/api")
        #expect(settings.subjectTokenType == "urn:ietf:params:oauth:token-type:jwt")
        #expect(settings.requestedTokenType == OnBehalfOfSettings.accessTokenType)
        #expect(settings.actorToken == .tokenEnv("SECRET"))
        #expect(settings.actorTokenType == "urn:x:actor")
        #expect(settings.maximumSubjects == 5)
    }

    static let problemCases: [ProblemCase] = [
        ProblemCase(
            F.account(
                #"{"flow": "dev"}"#,
                routes: [
                    #"{"prefix": "/obo", "upstream": "https://a.example", "auth": "on-behalf-of", "scopes": ["s"]}"#
                ]),
            "routes[0].auth",
            "\"on-behalf-of\" needs the \"client-credentials\" flow: exchanging a caller's token authenticates the proxy "
                + "as a confidential client (the account's flow is \"dev\")"),
        ProblemCase(
            document(#""auth": "on-behalf-of""#), "routes[0].scopes",
            "is required with the \"jwt-bearer\" grant: the scopes of the downstream API, e.g. "
                + "[\"api://downstream/.default\"]"),
        ProblemCase(
            document(#""auth": "on-behalf-of", "scopes": ["s"], "onBehalfOf": {"audience": "x"}"#),
            "routes[0].onBehalfOf.audience", "only used with \"grant\": \"token-exchange\" (RFC 8693)"),
        ProblemCase(
            document(#""auth": "on-behalf-of", "onBehalfOf": {"grant": "token-exchange", "resource": "not a uri"}"#),
            "routes[0].onBehalfOf.resource",
            "must be an absolute URI, e.g. \"urn:ietf:params:oauth:token-type:access_token\" (RFC 8693 §3)"),
        ProblemCase(
            document(#""auth": "on-behalf-of", "onBehalfOf": {"grant": "token-exchange", "actorTokenType": "urn:x"}"#),
            "routes[0].onBehalfOf.actorTokenType", "needs \"actorToken\""),
        ProblemCase(
            document(#""auth": "on-behalf-of", "scopes": ["s"], "token": "firebase-id""#), "routes[0].token",
            "not used with \"auth\": \"on-behalf-of\" (the exchange issues the token)"),
        ProblemCase(
            document(#""auth": "on-behalf-of", "scopes": ["s"], "tokenType": "dpop""#), "routes[0].tokenType",
            "\"dpop\" is not offered with \"auth\": \"on-behalf-of\" (the exchanged tokens are bearer tokens)"),
        ProblemCase(
            document(#""scopes": ["api://a/.default"], "onBehalfOf": {}"#), "routes[0].onBehalfOf",
            "only used with \"auth\": \"on-behalf-of\""),
    ]

    @Test(arguments: problemCases)
    func reportsProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }

    @Test("an unknown key, a bad grant and maxSubjects out of range are reported together, each at its path")
    func everyProblemAtOnce() {
        let problems = F.problems(
            Self.document(
                #""auth": "on-behalf-of", "scopes": ["s"], "onBehalfOf": {"grant": "obo", "maxSubject": 1, "#
                    + #""maxSubjects": 0}"#))
        let paths = Set(problems.map(\.path))
        #expect(
            paths == [
                "routes[0].onBehalfOf.grant", "routes[0].onBehalfOf.maxSubject", "routes[0].onBehalfOf.maxSubjects",
            ], "\(problems)")
    }
}
