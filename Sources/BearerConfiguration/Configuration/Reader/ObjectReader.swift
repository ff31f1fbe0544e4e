import BearerHTTP
import BearerJSON

/// Reads the members of one JSON object, reporting missing keys, unknown keys and values of the wrong type.
///
/// Getters return `nil` both when a key is absent and when its value is invalid; in the second case the
/// problem is already recorded, so callers only decide what absence means.
struct ObjectReader {
    package let path: JSONPath
    package let problems: ProblemCollector
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

    package func contains(_ key: String) -> Bool { members[key] != nil }

    package func path(_ key: String) -> JSONPath { path.key(key) }

    package func report(_ key: String, _ message: String) { problems.report(path.key(key), message) }

    /// The raw value of `key`; when it is missing and `required`, records "is required".
    package func value(_ key: String, required: Bool = false) -> JSONValue? {
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

extension ObjectReader {
    package func string(_ key: String, required: Bool = false) -> String? {
        guard let value = value(key, required: required) else { return nil }
        return JSONValue.string(value, at: path(key), problems: problems)
    }

    /// A string that must not be empty (names, identifiers, hints).
    func nonEmptyString(_ key: String, required: Bool = false) -> String? {
        guard let text = string(key, required: required) else { return nil }
        guard !text.isEmpty else {
            report(key, "must not be empty")
            return nil
        }
        return text
    }

    func bool(_ key: String) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else {
            report(key, "must be true or false")
            return nil
        }
        return flag
    }

    /// An integer within `range`; the message states the range.
    package func integer(_ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .integer(let number) = value, range.contains(number) else {
            report(key, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return number
    }

    package func array(_ key: String, required: Bool = false) -> [JSONValue]? {
        guard let value = value(key, required: required) else { return nil }
        guard case .array(let elements) = value else {
            report(key, "must be an array")
            return nil
        }
        return elements
    }

    func object(_ key: String, required: Bool = false) -> ObjectReader? {
        guard let value = value(key, required: required) else { return nil }
        return ObjectReader(value, at: path(key), problems: problems)
    }

    /// The non-empty strings of an array, each with its path; bad elements are reported at their own index
    /// and left out. `nil` when the key is absent, not an array, or an empty array that `allowEmpty` forbids.
    func stringElements(_ key: String, required: Bool = false, allowEmpty: Bool = false) -> [(
        value: String, path: JSONPath
    )]? {
        guard let elements = array(key, required: required) else { return nil }
        guard allowEmpty || !elements.isEmpty else {
            report(key, "must not be empty")
            return nil
        }
        var strings: [(value: String, path: JSONPath)] = []
        for (index, element) in elements.enumerated() {
            let elementPath = path(key).index(index)
            guard let text = JSONValue.string(element, at: elementPath, problems: problems) else { continue }
            guard !text.isEmpty else {
                problems.report(elementPath, "must not be empty")
                continue
            }
            strings.append((text, elementPath))
        }
        return strings
    }

    /// The non-empty strings of an array (see `stringElements`).
    func stringArray(_ key: String, required: Bool = false, allowEmpty: Bool = false) -> [String]? {
        stringElements(key, required: required, allowEmpty: allowEmpty)?.map(\.value)
    }

    /// A number of seconds, `0 < t ≤ 86400` (one day), as a `Duration`.
    package func timeout(_ key: String) -> Duration? {
        guard let value = value(key) else { return nil }
        let seconds: Double? =
            switch value {
            case .integer(let number): Double(number)
            case .number(let number): number
            default: nil
            }
        guard let seconds, seconds > 0, seconds <= 86_400 else {
            report(key, "must be a number of seconds greater than 0 and at most 86400")
            return nil
        }
        return .seconds(seconds)
    }

    /// One of a closed set of string values, with a suggestion when the value looks like a typo.
    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, required: Bool = false) -> Choice?
    where Choice.RawValue == String {
        guard let text = string(key, required: required) else { return nil }
        if let choice = Choice(rawValue: text) { return choice }
        let names = Choice.allCases.map(\.rawValue)
        let listed = names.map { "\"\($0)\"" }.joined(separator: ", ")
        let suggestion = SpellingSuggestion.closest(to: text, among: names)
        report(key, "must be one of \(listed)" + (suggestion.map { " (did you mean \"\($0)\"?)" } ?? ""))
        return nil
    }
}

extension JSONValue {
    /// The string inside `value`, or records "must be a string".
    package static func string(_ value: JSONValue, at path: JSONPath, problems: ProblemCollector) -> String? {
        guard case .string(let text) = value else {
            problems.report(path, "must be a string")
            return nil
        }
        return text
    }
}
