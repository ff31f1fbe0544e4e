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

/// Every complete example in docs/configuration.md is a valid configuration, so the reference cannot go stale.
@Suite struct DocumentedExamplesTests {
    static let document = ShippedRoutesTests.repositoryRoot.appendingPathComponent("docs/configuration.md")

    /// The ```json blocks that are whole files (they have `routes`), not snippets.
    static func completeExamples() throws -> [String] {
        let text = try String(contentsOf: document, encoding: .utf8)
        return text.components(separatedBy: "```json\n").dropFirst()
            .compactMap { $0.components(separatedBy: "\n```").first }
            .filter { $0.contains("\"routes\"") }
    }

    @Test func everyCompleteExampleIsValid() throws {
        let examples = try Self.completeExamples()
        #expect(examples.count >= 11)

        // Run each from a directory holding the files the examples name, with every named variable set.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: directory.appendingPathComponent("internal-ca.pem"))

        for example in examples {
            var environment = ["BEARER_PROXY_KEY": "key"]
            for name in Self.variableNames(in: example) { environment[name] = "value" }
            let path = directory.appendingPathComponent("routes.json")
            try Data(example.utf8).write(to: path)
            do {
                _ = try Configuration.load(path: path.path, environment: environment)
            } catch {
                Issue.record("\(error)\nin:\n\(example)")
            }
        }
    }

    /// The values of `…Env` keys.
    static func variableNames(in example: String) -> [String] {
        example.components(separatedBy: "Env\": \"").dropFirst().compactMap { $0.components(separatedBy: "\"").first }
    }
}
