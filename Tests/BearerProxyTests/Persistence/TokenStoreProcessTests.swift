import Foundation
import StateStress
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

// These tests run a second process with the product's own TokenStore, the test-only executable
//   bearer-proxy-stress --state-dir D --account K --iterations N
// (`StateStress.runWriter`).

/// Crashes and concurrent writers across processes (SPEC §7: "a crash or two processes never corrupt it").
@Suite("Token store across processes (with the test-only `bearer-proxy-stress`)")
struct TokenStoreProcessTests {
    @Test(
        "a writer killed with SIGKILL mid-write leaves a readable cache, and its leftovers do not break the next update"
    )
    func killedWriter() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try await Self.killWritersRepeatedly(scratch, rounds: 6)
    }

    @Test("two processes writing at once lose none of each other's updates")
    func twoProcesses() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let iterations = 100
        let state = scratch.state
        let children = try await withThrowingTaskGroup(of: (String, StressProcess.Exit).self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await StressProcess.run(state: state, accountKey: "shared", iterations: iterations) {
                        $0.writer
                    }
                }
            }
            return try await group.reduce(into: [(String, StressProcess.Exit)]()) { $0.append($1) }
        }
        let writers = children.map(\.0)
        for (_, exit) in children { #expect(exit.succeeded, "\(exit.termination): \(exit.stderr)") }
        guard case .loaded(let account) = try scratch.store("shared").load() else {
            Issue.record("expected the account")
            return
        }
        let counts = try StateStress.census(of: account)
        #expect(counts == [writers[0]: iterations, writers[1]: iterations])
    }

    /// Each round starts a writer on the same file, lets it complete a few updates, and kills it: in odd rounds
    /// wherever it is, in even rounds as soon as its temporary file appears — between `StateDirectory`'s
    /// `open(".<name>.<pid>.tmp")` and its `rename` — so that some kills certainly land mid-write (a kill at a
    /// random moment mostly lands in JSON work: about 1 in 40 hits the write).
    static func killWritersRepeatedly(_ scratch: StoreScratchDirectory, rounds: Int) async throws {
        let store = scratch.store("crash")
        var expected: [String: Int] = [:]
        var killedMidWrite = 0
        for round in 1...rounds {
            let ((writer, temporary, reported), exit) = try await StressProcess.run(
                state: scratch.state, accountKey: "crash", iterations: 1_000_000
            ) { child in
                _ = try await child.waitForProgress(atLeast: 3 + round)
                let temporary = scratch.state.path + "/.tokens-crash.json.\(child.processIdentifier).tmp"
                let reported = await child.kill(onceExists: round.isMultiple(of: 2) ? temporary : nil)
                return (child.writer, temporary, reported)
            }
            #expect(exit.killed, "expected SIGKILL; got \(exit.termination): \(exit.stderr)")
            if FileManager.default.fileExists(atPath: temporary) { killedMidWrite += 1 }

            guard case .loaded(let account) = try store.load() else {
                Issue.record("expected the account after the kill")
                return
            }
            // Whole, consistent, and holding every update the writer reported — plus possibly the one whose
            // rename landed just before the kill, before it could print.
            let counts = try StateStress.census(of: account)
            let written = counts[writer] ?? 0
            #expect(written == reported || written == reported + 1, "reported \(reported), file has \(written)")
            expected[writer] = written
            #expect(counts == expected)
        }
        // Otherwise this test would pass without testing a crash mid-write at all.
        #expect(killedMidWrite > 0, "no kill landed while a temporary file existed")

        // The next update works whatever the kills left behind, and cleans up their temporary files.
        let survivor = try store.update { $0?.updatedAt = Date() }
        #expect(try StateStress.census(of: try #require(survivor)) == expected)
        #expect(scratch.entries().filter { $0.hasSuffix(".tmp") } == [])
        #expect(try store.load() == .loaded(try #require(survivor)))
    }
}
