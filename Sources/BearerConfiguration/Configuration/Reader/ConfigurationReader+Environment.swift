import BearerHTTP
import BearerJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// What routes.json names outside itself: environment variables (…Env keys) and files (caFile, certFile,
// keyFile, and routes.json itself).

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

extension ConfigurationReader {
    /// Reads a key naming a file that must exist and be readable; returns its absolute path.
    func readFile(_ object: ObjectReader, _ key: String, required: Bool = false) -> String? {
        guard let name = object.nonEmptyString(key, required: required) else { return nil }
        return existingFile(name, at: object.path(key))
    }

    /// The absolute path of `name` (relative to routes.json's directory) when it is a readable file, else nil with
    /// a problem at `path`; `variable` is the environment variable that named it, if one did.
    func existingFile(_ name: String, at path: JSONPath, namedBy variable: String? = nil) -> String? {
        let base = URL(fileURLWithPath: baseDirectory, isDirectory: true)
        let resolved = URL(fileURLWithPath: name, relativeTo: base).standardizedFileURL.path
        var shown = name == resolved ? "\"\(name)\"" : "\"\(name)\" (\(resolved))"
        if let variable { shown += ", named by \(variable)," }
        guard let isDirectory = Self.existingIsDirectory(resolved) else {
            problems.report(path, "file \(shown) does not exist")
            return nil
        }
        guard !isDirectory else {
            problems.report(path, "\(shown) is a directory, not a file")
            return nil
        }
        guard FileManager.default.isReadableFile(atPath: resolved) else {
            problems.report(path, "file \(shown) is not readable")
            return nil
        }
        return resolved
    }

    /// Reads routes.json itself, with a problem at `$` when that is impossible.
    static func readDocument(at path: String) -> Result<Data, ConfigurationError> {
        func failure(_ message: String) -> Result<Data, ConfigurationError> {
            .failure(ConfigurationError(problems: [ConfigurationProblem(path: "$", message: message)]))
        }
        guard let isDirectory = existingIsDirectory(path) else {
            return failure("file \"\(path)\" does not exist")
        }
        guard !isDirectory else { return failure("\"\(path)\" is a directory, not a file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            return failure("file \"\(path)\" is not readable")
        }
        return .success(data)
    }

    /// Whether something at `path` is a directory; nil when nothing is there. (FoundationEssentials reports it in a
    /// `Bool`, Darwin's Foundation in an `ObjCBool`.)
    package static func existingIsDirectory(_ path: String) -> Bool? {
        #if canImport(FoundationEssentials)
            var isDirectory = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) ? isDirectory : nil
        #else
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) ? isDirectory.boolValue : nil
        #endif
    }
}
