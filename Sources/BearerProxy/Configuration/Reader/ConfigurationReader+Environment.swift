extension ConfigurationReader {
    /// `[A-Za-z_][A-Za-z0-9_]*`, the portable shell variable name (POSIX.1-2017 §8.1).
    static func isVariableName(_ text: String) -> Bool {
        guard let first = text.utf8.first, !URICharacters.isDigit(first) else { return false }
        return text.utf8.allSatisfy { URICharacters.isAlpha($0) || URICharacters.isDigit($0) || $0 == 0x5F }
    }

    /// Reads a key that names an environment variable (`tokenEnv`, `passwordEnv`, …).
    ///
    /// With `mustBeSet`, the variable must also be set and non-empty now, so a missing secret is found by
    /// `check` rather than at the first request. Messages name the variable and never show a value: a value
    /// pasted by mistake into the key could itself be the secret.
    func readVariableName(_ object: ObjectReader, _ key: String, required: Bool, mustBeSet: Bool) -> String? {
        guard let name = object.string(key, required: required) else { return nil }
        guard Self.isVariableName(name) else {
            object.report(
                key,
                "must be the name of an environment variable (letters, digits and \"_\", not starting with a digit)"
                    + ", not its value"
            )
            return nil
        }
        if mustBeSet { requireVariable(name, at: object.path(key)) }
        return name
    }

    /// Records a problem unless `name` is set to a non-empty value.
    func requireVariable(_ name: String, at path: JSONPath) {
        switch environment[name] {
        case nil: problems.report(path, "environment variable \(name) is not set")
        case let value? where value.isEmpty: problems.report(path, "environment variable \(name) is empty")
        default: break
        }
    }
}
