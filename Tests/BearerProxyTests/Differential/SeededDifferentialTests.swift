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

/// Seeded mutations of the corpus through the three references (issue #24 condition 2): the tallies by family are
/// the knowledge; the run must finish with a verdict from every reference for every input. Scaled by
/// ``DifferentialSettings`` for the long run.
@Suite("Differential: seeded mutations through the three references", .ownThread)
struct SeededDifferentialTests {
    @Test("seeded mutations: every input gets a verdict from each reference; tallies by family")
    func seededMutations() async throws {
        let run = try await ReferenceRun.prepared()
        let seeds = SmugglingCorpus.entries.map { $0.input() }
        var tally = DifferentialTally()
        let started = ContinuousClock.now
        for seed in DifferentialSettings.seeds {
            var mutator = StreamMutator(seed: seed, seeds: seeds)
            var remaining = DifferentialSettings.inputsPerSeed
            while remaining > 0 {
                let inputs = (0..<min(remaining, ReferencePrograms.batchSize)).map { _ in mutator.next() }
                let comparisons = try await run.compare(inputs)
                #expect(comparisons.count == inputs.count)
                for (input, comparison) in zip(inputs, comparisons) { tally.add(input, comparison) }
                remaining -= inputs.count
            }
        }
        let seconds = Double((ContinuousClock.now - started).components.seconds) + 0.001
        print(
            "Differential seeded run (seeds \(DifferentialSettings.seeds), \(Int(Double(tally.inputs) / seconds)) inputs/s):\n\(tally)"
        )
        #expect(tally.inputs == DifferentialSettings.seeds.count * DifferentialSettings.inputsPerSeed)
    }
}
