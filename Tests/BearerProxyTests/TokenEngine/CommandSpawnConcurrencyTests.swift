import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerSignIn
@testable import BearerTokens

/// A `command` token source runs its program while the same process starts others: `serve`'s other routes' commands,
/// and — in the suite — tests' own children. swift-subprocess forks under its own lock and reads the exec-status pipe
/// until the child has exec'd, so a fork that raced another must never leave one side waiting. Every program of the
/// flow finishes with its own output while unrelated programs start and end around it.
@Suite("command token source: programs started concurrently with others each finish with their own output")
struct CommandSpawnConcurrencyTests {
    @Test("64 token commands at once, while 32 other programs start and end beside them")
    func concurrentSpawns() async throws {
        let script = #"printf '{"accessToken":"tok-%s","expires_in":3600}' "$1""#
        let flow = CommandFlow(
            account: CommandAccount(argv: ["sh", "-c", script, "sh", "{resource}"], timeout: .seconds(20)),
            now: { Date() })
        let tokens = try await withTimeout(waitingFor: "every command to finish") {
            try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<64 {
                    group.addTask {
                        let scopes = ScopeSet(["api://r\(index)/Read"])
                        let token = try await flow.acquireToken(TokenRequest(scopes: scopes))
                        return (index, token.value)
                    }
                }
                for index in 0..<32 {
                    group.addTask {
                        let other = try await ChildProcess.run(
                            "/bin/sh", ["-c", "read line; echo \"$line\""], stdin: "\(index)\n")
                        #expect(other.stdout == "\(index)\n")
                        return (-1, nil)
                    }
                }
                var tokens: [Int: String] = [:]
                for try await (index, token) in group where index >= 0 { tokens[index] = token }
                return tokens
            }
        }
        #expect(tokens.count == 64)
        for index in 0..<64 { #expect(tokens[index] == "tok-api://r\(index)") }
    }
}
