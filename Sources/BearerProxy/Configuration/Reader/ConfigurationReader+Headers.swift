extension ConfigurationReader {
    /// `headers: {"set": {name: value}, "remove": [name]}`.
    func readHeaders(_ headers: ObjectReader) -> HeaderRules? {
        headers.rejectUnknownKeys(allowed: ConfigurationKeys.headers)
        var fields: [HeaderField] = []
        var setNames: [String: String] = [:]
        if let set = headers.object("set") {
            for name in set.keys {
                guard let value = set.value(name), isAllowedHeaderName(name, at: set.path(name)) else { continue }
                if let first = setNames[name.lowercased()] {
                    set.report(name, "sets the same header as \"\(first)\" (header names are case-insensitive)")
                    continue
                }
                setNames[name.lowercased()] = name
                guard let text = JSONValue.string(value, at: set.path(name), problems: problems) else { continue }
                if let problem = Self.headerValueProblem(text) {
                    set.report(name, problem)
                    continue
                }
                fields.append(HeaderField(name: name, value: text))
            }
        }
        var removed: [String] = []
        for (name, path) in headers.stringElements("remove", allowEmpty: true) ?? []
        where isAllowedHeaderName(name, at: path) {
            if setNames[name.lowercased()] != nil {
                problems.report(path, "is also in \"set\"; a header is either set or removed")
                continue
            }
            removed.append(name)
        }
        return HeaderRules(set: fields, remove: removed)
    }

    /// A header name must be a token (RFC 9110 §5.1) and not one the proxy manages itself.
    private func isAllowedHeaderName(_ name: String, at path: JSONPath) -> Bool {
        guard URICharacters.isToken(name) else {
            problems.report(path, "is not a valid header name (an RFC 9110 token)")
            return false
        }
        if let reason = HeaderRules.reservation(of: name) {
            problems.report(path, reason)
            return false
        }
        return true
    }

    /// Control characters could end the header early and inject others (RFC 9110 §5.5); edges must be trimmed.
    /// The value itself is never repeated: it may be a credential.
    static func headerValueProblem(_ value: String) -> String? {
        if value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            return "must not contain control characters such as CR, LF or NUL"
        }
        if let first = value.utf8.first, let last = value.utf8.last,
            [0x20, 0x09].contains(first) || [0x20, 0x09].contains(last)
        {
            return "must not start or end with spaces or tabs (RFC 9110 §5.5)"
        }
        return nil
    }
}
