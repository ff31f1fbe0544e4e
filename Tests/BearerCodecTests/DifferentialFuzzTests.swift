import CodecFuzzing
import Foundation
import Testing

@testable import BearerCodec

/// Differential fuzzing of the prototype's parser against NIOHTTP1's decoder (issue #15 item 4): every input is
/// either parsed to the same message by both — start line, fields in order, body, trailers — or refused by ours.
/// Seeded and bounded, so it runs the same in CI in seconds. `bench/floor/fuzz.sh` runs it long, with other seeds:
/// `BENCH_FUZZ_SEED` and `BENCH_FUZZ_INPUTS` (requests; responses get two thirds as many) override the defaults.
@Suite("BearerCodec: differential fuzz against NIOHTTP1")
struct DifferentialFuzzTests {
    static let seed: UInt64 = setting("BENCH_FUZZ_SEED").flatMap { UInt64($0) } ?? 0x6265_6172_6572_2D31  // "bearer-1"
    static let requestInputs = setting("BENCH_FUZZ_INPUTS").flatMap { Int($0) } ?? 12_000
    static let responseInputs = requestInputs * 2 / 3

    private static func setting(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The tally of one run; `mismatches` holds every input where ours accepted what NIO refused or parsed otherwise.
    struct Tally: CustomStringConvertible {
        var inputs = 0
        var bothAccepted = 0
        var bothRefused = 0
        var bothIncomplete = 0
        var refusedByOursOnly = 0
        var oursIncompleteNIORefused = 0
        var refusedByOursOnlyReasons: [String: Int] = [:]
        /// One input per reason refused by ours only, for the report (what NIO accepts that ours refuses).
        var refusedByOursOnlyExamples: [String: String] = [:]
        /// Inputs ours still waited on while NIO had refused them: not accepted by ours, kept for the report.
        var oursIncompleteNIORefusedExamples: [String] = []
        var mismatches: [String] = []

        mutating func add(input: [UInt8], ours: Outcome, nio: Outcome) {
            inputs += 1
            switch (ours, nio) {
            case (.refused, .refused): bothRefused += 1
            case (.refused(let why), _):
                refusedByOursOnly += 1
                refusedByOursOnlyReasons[why, default: 0] += 1
                if refusedByOursOnlyExamples[why] == nil { refusedByOursOnlyExamples[why] = Self.show(input) }
            case (.incomplete, .incomplete): bothIncomplete += 1
            case (.incomplete, .refused(let why)):
                oursIncompleteNIORefused += 1
                if oursIncompleteNIORefusedExamples.count < 5 {
                    oursIncompleteNIORefusedExamples.append("\(why): \(Self.show(input))")
                }
            case (.message(let a), .message(let b)) where a == b: bothAccepted += 1
            default:
                mismatches.append("ours \(ours), NIO \(nio), input \(Self.show(input))")
            }
        }

        static func show(_ bytes: [UInt8]) -> String {
            String(decoding: bytes.prefix(400), as: UTF8.self).debugDescription
        }

        var description: String {
            let reasons = refusedByOursOnlyReasons.sorted { $0.value > $1.value }.prefix(12)
                .map { "\($0.value)× \($0.key), e.g. \(refusedByOursOnlyExamples[$0.key] ?? "")" }
                .joined(separator: "; ")
            return "\(inputs) inputs: \(bothAccepted) parsed alike, \(bothRefused) refused by both, "
                + "\(bothIncomplete) incomplete for both, \(refusedByOursOnly) refused by ours only, "
                + "\(oursIncompleteNIORefused) incomplete for ours and refused by NIO, \(mismatches.count) mismatches. "
                + "Refused by ours only, most common: \(reasons). "
                + "Incomplete for ours, refused by NIO, e.g.: \(oursIncompleteNIORefusedExamples)"
        }
    }

    @Test("the product's hostile requests: refused by ours where a parser must, never accepted otherwise than NIO")
    func hostileCorpus() {
        var tally = Tally()
        for hostile in Corpus.hostile {
            let input = Array(hostile.raw.utf8)
            let ours = StrictReference.request([input])
            tally.add(input: input, ours: ours, nio: NIOReference.request([input]))
            if hostile.parser {
                guard case .refused = ours else {
                    Issue.record("\(hostile.name): accepted by ours (\(ours))")
                    continue
                }
            }
        }
        print("hostile corpus: \(tally)")
        #expect(tally.mismatches.isEmpty, "\(tally.mismatches)")
    }

    @Test("seeded mutations of valid requests, split into reads")
    func requests() {
        var mutator = Mutator(random: SeededGenerator(seed: Self.seed))
        var tally = Tally()
        let seeds = Corpus.requests.map { Array($0.utf8) }
        for index in 0..<Self.requestInputs {
            let seed = seeds[index % seeds.count]
            let input = index < seeds.count ? seed : mutator.mutate(seed)
            let pieces = mutator.split(input)
            tally.add(input: input, ours: StrictReference.request(pieces), nio: NIOReference.request(pieces))
        }
        print("requests (seed \(Self.seed)): \(tally)")
        #expect(tally.mismatches.isEmpty, "\(tally.mismatches.prefix(20))")
        #expect(tally.bothAccepted > Self.requestInputs / 10, "too few inputs were valid to say anything")
    }

    @Test("seeded mutations of valid responses, split into reads, the upstream closing at the end")
    func responses() {
        var mutator = Mutator(random: SeededGenerator(seed: Self.seed ^ 0xFF))
        var tally = Tally()
        let seeds = Corpus.responses.map { (Array($0.raw.utf8), $0.head) }
        for index in 0..<Self.responseInputs {
            let (seed, head) = seeds[index % seeds.count]
            let input = index < seeds.count ? seed : mutator.mutate(seed)
            let pieces = mutator.split(input)
            tally.add(
                input: input, ours: StrictReference.response(pieces, requestWasHead: head),
                nio: NIOReference.response(pieces, requestWasHead: head))
        }
        print("responses (seed \(Self.seed ^ 0xFF)): \(tally)")
        #expect(tally.mismatches.isEmpty, "\(tally.mismatches.prefix(20))")
        #expect(tally.bothAccepted > Self.responseInputs / 10, "too few inputs were valid to say anything")
    }
}
