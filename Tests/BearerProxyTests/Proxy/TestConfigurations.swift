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

/// Builds validated configurations from JSON snippets, the way users write them.
enum TestConfigurations {
    /// A dev-account configuration with `routes` (a JSON array) and optional extra top-level members.
    static func make(
        routes: String, extra: String = "", account: String = #"{ "flow": "dev" }"#,
        environment: [String: String] = [:]
    ) throws -> Configuration {
        let json = """
            { "listen": "127.0.0.1:0", "account": \(account)\(extra.isEmpty ? "" : ", " + extra),
              "routes": \(routes) }
            """
        do {
            return try Configuration.parse(Data(json.utf8), environment: environment)
        } catch {
            Issue.record("test configuration is invalid: \(error)")
            throw error
        }
    }

    /// The single route of a one-route configuration.
    static func route(_ route: String) throws -> Route {
        try make(routes: "[\(route)]").routes.routes[0]
    }
}
