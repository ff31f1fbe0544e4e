/// Counts of outcomes per corpus family: what a run prints, and what the long run records.
struct DifferentialTally: Sendable, CustomStringConvertible {
    /// family → outcome (``StreamComparison/outcome``) → count.
    private(set) var counts: [String: [String: Int]] = [:]
    /// The first few disagreements of each family, with their bytes, for the report.
    private(set) var examples: [String: [String]] = [:]
    static let examplesPerFamily = 3

    mutating func add(_ input: DifferentialInput, _ comparison: StreamComparison) {
        counts[input.family, default: [:]][comparison.outcome, default: 0] += 1
        if comparison.agreement == .disagree, examples[input.family, default: []].count < Self.examplesPerFamily {
            examples[input.family, default: []].append("\(input.escaped) splits \(input.splits)\n      \(comparison)")
        }
    }

    func total(_ agreement: StreamComparison.Agreement) -> Int {
        counts.values.flatMap { $0 }.filter { $0.key.hasPrefix(agreement.rawValue) }.map(\.value).reduce(0, +)
    }

    var inputs: Int { counts.values.flatMap(\.values).reduce(0, +) }

    var description: String {
        var lines = [
            "\(inputs) inputs: agree \(total(.agree)), refuse \(total(.refuse)), disagree \(total(.disagree))"
        ]
        for family in counts.keys.sorted() {
            let outcomes = counts[family]!.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            lines.append("  \(family): " + outcomes.joined(separator: ", "))
        }
        for family in examples.keys.sorted() {
            lines.append("  disagreements in \(family):")
            lines += examples[family]!.map { "    " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}
