import BearerHTTP
import BearerJSON

/// Finds the known name a misspelt one was probably meant to be, for "did you mean" hints.
enum SpellingSuggestion {
    /// The candidate `word` was probably meant to be (ignoring case): the closest by edit distance if that is
    /// close enough to be a typo, else the shortest that starts with `word` ("ca" → "caFile",
    /// "microsoft" → "microsoft.com").
    static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let lowered = word.lowercased()
        let typed = Array(lowered.unicodeScalars)
        let sorted = candidates.sorted()
        // Allow roughly one edit per three characters, at least one and at most three.
        let limit = min(3, max(1, typed.count / 3))
        var best: (name: String, distance: Int)?
        for candidate in sorted {
            let distance = editDistance(typed, Array(candidate.lowercased().unicodeScalars))
            if distance <= limit, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        if let best { return best.name }
        guard typed.count >= 2 else { return nil }
        return sorted.filter { $0.lowercased().hasPrefix(lowered) }.min { $0.count < $1.count }
    }

    /// ` (did you mean "scopes"?)`, or an empty string when nothing is close.
    static func hint(for word: String, among candidates: some Sequence<String>) -> String {
        closest(to: word, among: candidates).map { " (did you mean \"\($0)\"?)" } ?? ""
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit ("optimal string alignment").
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousRow = [Int](repeating: 0, count: b.count + 1)
        var row = Array(0...b.count)
        var rowBefore = row
        for i in 1...a.count {
            rowBefore = previousRow
            previousRow = row
            row[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previousRow[j] + 1, row[j - 1] + 1, previousRow[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], rowBefore[j - 2] + 1)
                }
            }
        }
        return row[b.count]
    }
}
