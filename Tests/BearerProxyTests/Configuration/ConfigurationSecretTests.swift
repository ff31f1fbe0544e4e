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

/// Environment values (and header values, which may be credentials) never appear in a problem.
@Suite struct ConfigurationSecretTests {
    typealias F = ConfigurationFixture

    static let secret = F.secretValue

    /// Every validation case of every table, plus cases built to tempt a message into quoting a secret.
    static var documents: [(json: String, environment: [String: String])] {
        let tables =
            DocumentProblemTests.cases + RouteProblemTests.prefixCases + RouteProblemTests.upstreamCases
            + RouteProblemTests.scopeCases + RouteProblemTests.authCases + RouteProblemTests.headerCases
            + RouteProblemTests.otherCases + AccountProblemTests.generalCases + AccountProblemTests.oauthCases
            + AccountProblemTests.nativeCases + AccountProblemTests.browserCases
            + AccountProblemTests.clientCredentialsCases + AccountProblemTests.otherFlowCases
            + AccountProblemTests.managedIdentityCases
            + FirebaseProblemTests.accountCases + FirebaseProblemTests.routeCases
        var environment = F.environment
        environment["FIREBASE_AUTH_EMULATOR_HOST"] = secret
        environment["BEARER_PROXY_KEY"] = secret
        environment["IDENTITY_HEADER"] = secret
        let tempting = [
            // The secret pasted where a variable name belongs.
            F.account(#"{"flow": "static", "tokenEnv": "\#(secret)"}"#),
            AccountProblemTests.clientCredentials(#""clientSecretEnv": "\#(secret)""#),
            // A secret header value that is invalid for another reason.
            F.routeWith(#""headers": {"set": {"X-Api-Key": "\#(secret)\r\n"}}"#),
            F.routeWith(#""headers": {"set": {"X-Api-Key": " \#(secret)"}}"#),
            // The managed identity endpoint's secret header is set while its endpoint is wrong.
            AccountProblemTests.managedIdentity(#""protocol": "app-service", "endpoint": "http://x.example/token""#),
            // An invalid emulator host taken from the environment.
            FirebaseProblemTests.firebase(""),
        ]
        return tables.map { ($0.json, $0.environment.merging(environment) { _, new in new }) }
            + tempting.map { ($0, environment) }
    }

    @Test func noProblemQuotesASecret() {
        var checked = 0
        for (json, environment) in Self.documents {
            let problems = F.problems(json, environment: environment)
            let text = ConfigurationError(problems: problems).description
            #expect(!text.contains(Self.secret), "\(text)")
            checked += problems.count
        }
        #expect(checked > 150)
    }

    @Test func temptingCasesAreStillReported() {
        let problems = F.problems(
            F.account(#"{"flow": "static", "tokenEnv": "\#(Self.secret)"}"#), environment: ["X": Self.secret])
        #expect(problems.map(\.path) == ["account.tokenEnv"])
    }
}
