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

/// The three reference parsers against each other on the seed corpus (issue #24 condition 2). Where they disagree is
/// knowledge for the codec, not a failure: it is printed by family. What must hold: valid, unambiguous messages and
/// pipelines are accepted and framed alike by all three, and each reference frames a stream the same way however
/// its reads are split.
@Suite("Differential: the three reference parsers on the smuggling corpus", .ownThread)
struct ReferenceAgreementTests {
    static let mustAgree = SmugglingCorpus.entries.filter(\.mustAgree)

    @Test("valid messages and pipelines: all three accept them and frame them alike", arguments: mustAgree)
    func validMessagesAgree(entry: CorpusEntry) async throws {
        let run = try await ReferenceRun.prepared()
        let input = entry.input()
        let comparison = try #require(try await run.compare([input]).first)
        #expect(comparison.agreement == .agree, "\(input.escaped): \(comparison)")
        #expect(!comparison.agreedMessages.isEmpty)
    }

    @Test("every corpus entry: one verdict per reference, the same whatever the read splits; tallied by family")
    func corpusByFamily() async throws {
        let run = try await ReferenceRun.prepared()
        let whole = SmugglingCorpus.entries.map { $0.input() }
        // Every split of the first 48 bytes into two reads, and a few random ones: a head parser's state at each byte.
        var mutator = StreamMutator(seed: 9112, seeds: whole)
        var split: [DifferentialInput] = []
        for input in whole {
            for cut in 1..<min(input.bytes.count, 48) { split.append(input.read(splitAt: [cut])) }
            for _ in 0..<8 { split.append(input.read(splitAt: mutator.splits(of: input.bytes.count))) }
        }
        let comparisons = try await run.compare(whole + split)
        let byInput = Dictionary(zip(whole, comparisons.prefix(whole.count)).map { ($0.0.bytes, $0.1) }) { first, _ in
            first
        }
        var tally = DifferentialTally()
        for (input, comparison) in zip(whole, comparisons) { tally.add(input, comparison) }
        for (input, comparison) in zip(split, comparisons.dropFirst(whole.count)) {
            let unsplit = try #require(byInput[input.bytes])
            for reference in Reference.allCases {
                let (one, other) = (comparison.verdicts[reference]!, unsplit.verdicts[reference]!)
                // The error text may name the position reached; the verdict is the messages and the end.
                #expect(
                    one.messages == other.messages && one.end == other.end,
                    "\(reference) frames \(input.escaped) differently when split at \(input.splits): \(one) vs \(other)"
                )
            }
        }
        print("Differential corpus, references against each other:\n\(tally)")
        #expect(tally.inputs == SmugglingCorpus.entries.count)
    }
}
