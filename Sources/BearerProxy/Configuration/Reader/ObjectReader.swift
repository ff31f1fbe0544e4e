/// Reads the members of one JSON object, reporting missing keys, unknown keys and values of the wrong type.
///
/// Getters return `nil` both when a key is absent and when its value is invalid; in the second case the
/// problem is already recorded, so callers only decide what absence means.
struct ObjectReader {
    let path: JSONPath
    let problems: ProblemCollector
    private let members: [String: JSONValue]

    /// Reads `value` as an object, or records "must be an object" and returns `nil`.
    init?(_ value: JSONValue, at path: JSONPath, problems: ProblemCollector) {
        guard case .object(let members) = value else {
            problems.report(path, "must be an object")
            return nil
        }
        self.path = path
        self.problems = problems
        self.members = members
    }

    /// The keys present, sorted so that problems come out in the same order every time.
    var keys: [String] { members.keys.sorted() }

    func contains(_ key: String) -> Bool { members[key] != nil }

    func path(_ key: String) -> JSONPath { path.key(key) }

    func report(_ key: String, _ message: String) { problems.report(path.key(key), message) }

    /// The raw value of `key`; when it is missing and `required`, records "is required".
    func value(_ key: String, required: Bool = false) -> JSONValue? {
        if let value = members[key] { return value }
        if required { report(key, "is required") }
        return nil
    }

    /// Records an "unknown key" problem for every key outside `allowed`.
    ///
    /// `explain` may give a better message for keys that are valid elsewhere (another flow's keys);
    /// otherwise the message suggests the closest allowed key.
    func rejectUnknownKeys(allowed: Set<String>, explain: (String) -> String? = { _ in nil }) {
        for key in keys where !allowed.contains(key) {
            report(key, explain(key) ?? "unknown key" + SpellingSuggestion.hint(for: key, among: allowed))
        }
    }
}
