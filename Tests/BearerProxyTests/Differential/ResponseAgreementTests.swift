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

/// The three reference parsers against each other on upstream responses (issue #24 condition 2, the response side:
/// the codec frames what upstreams send too). Valid framings must agree; the rest is tallied by family.
@Suite("Differential: the three reference parsers on upstream responses", .ownThread)
struct ResponseAgreementTests {
    @Test(
        "valid responses: all three accept them and frame them alike",
        arguments: ResponseCorpus.entries.filter(\.mustAgree))
    func validResponsesAgree(entry: CorpusEntry) async throws {
        let run = try await ReferenceRun.prepared()
        let input = entry.input()
        let comparison = try #require(try await run.compare([input], responses: true).first)
        #expect(comparison.agreement == .agree, "\(input.escaped): \(comparison)")
    }

    @Test("every response entry and seeded mutations of them: a verdict from each reference; tallied by family")
    func responsesByFamily() async throws {
        let run = try await ReferenceRun.prepared()
        let whole = ResponseCorpus.entries.map { $0.input() }
        var mutator = StreamMutator(seed: DifferentialSettings.seeds.first ?? 24, seeds: whole)
        let mutated = (0..<DifferentialSettings.inputsPerSeed / 4).map { _ in mutator.next() }
        let comparisons = try await run.compare(whole + mutated, responses: true)
        var corpus = DifferentialTally()
        var seeded = DifferentialTally()
        for (input, comparison) in zip(whole, comparisons) { corpus.add(input, comparison) }
        for (input, comparison) in zip(mutated, comparisons.dropFirst(whole.count)) { seeded.add(input, comparison) }
        print("Differential responses, corpus:\n\(corpus)\nDifferential responses, seeded:\n\(seeded)")
        #expect(comparisons.count == whole.count + mutated.count)
    }
}
