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

/// Builds small routes.json documents for tests and parses them.
enum ConfigurationFixture {
    /// A valid route for the `dev` flow.
    static let route =
        #"{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["api://example/Data.Read"]}"#

    /// The environment every case runs with: one secret and one empty variable.
    static let environment = ["SECRET": secretValue, "EMPTY": ""]
    static let secretValue = "s3cr3t-value-that-must-never-be-shown"

    /// A file that certainly exists and is readable: this source file.
    static let existingFile = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().path

    /// A document with the `dev` account, one route, and `members` added at the top level.
    static func document(_ members: String = "", routes: [String] = [route]) -> String {
        let extra = members.isEmpty ? "" : ", \(members)"
        return #"{"account": {"flow": "dev"}, "routes": [\#(routes.joined(separator: ", "))]\#(extra)}"#
    }

    /// A document with the `dev` account and one route with `body` as its members.
    static func route(_ body: String) -> String {
        document(routes: ["{\(body)}"])
    }

    /// The default route's members plus `extra`.
    static func routeWith(_ extra: String) -> String {
        route(
            #""prefix": "/api", "upstream": "https://api.example.com", "scopes": ["api://example/Data.Read"], "#
                + extra)
    }

    /// A document with `account` and the given routes.
    static func account(_ account: String, routes: [String] = [route]) -> String {
        #"{"account": \#(account), "routes": [\#(routes.joined(separator: ", "))]}"#
    }

    /// The problems parsing `json` reports; empty when it is valid.
    static func problems(_ json: String, environment: [String: String] = environment) -> [ConfigurationProblem] {
        do {
            _ = try Configuration.parse(Data(json.utf8), environment: environment, baseDirectory: "/")
            return []
        } catch {
            return error.problems
        }
    }

    /// Parses `json`, which must be valid.
    static func parse(_ json: String, environment: [String: String] = environment) throws -> Configuration {
        try Configuration.parse(Data(json.utf8), environment: environment, baseDirectory: "/")
    }
}

/// One validation case: a document and the single problem it must produce, word for word.
struct ProblemCase: Sendable, CustomTestStringConvertible {
    let json: String
    let path: String
    let message: String
    var environment = ConfigurationFixture.environment

    init(_ json: String, _ path: String, _ message: String, environment: [String: String]? = nil) {
        self.json = json
        self.path = path
        self.message = message
        if let environment { self.environment = environment }
    }

    var testDescription: String { "\(path): \(message)" }

    var expected: [ConfigurationProblem] { [ConfigurationProblem(path: path, message: message)] }
}
