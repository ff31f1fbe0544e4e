import Foundation

extension ConfigurationReader {
    /// Reads a key naming a file that must exist and be readable; returns its absolute path.
    func readFile(_ object: ObjectReader, _ key: String, required: Bool = false) -> String? {
        guard let name = object.nonEmptyString(key, required: required) else { return nil }
        let base = URL(fileURLWithPath: baseDirectory, isDirectory: true)
        let resolved = URL(fileURLWithPath: name, relativeTo: base).standardizedFileURL.path
        let shown = name == resolved ? "\"\(name)\"" : "\"\(name)\" (\(resolved))"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) else {
            object.report(key, "file \(shown) does not exist")
            return nil
        }
        guard !isDirectory.boolValue else {
            object.report(key, "\(shown) is a directory, not a file")
            return nil
        }
        guard FileManager.default.isReadableFile(atPath: resolved) else {
            object.report(key, "file \(shown) is not readable")
            return nil
        }
        return resolved
    }

    /// Reads routes.json itself, with a problem at `$` when that is impossible.
    static func readDocument(at path: String) -> Result<Data, ConfigurationError> {
        func failure(_ message: String) -> Result<Data, ConfigurationError> {
            .failure(ConfigurationError(problems: [ConfigurationProblem(path: "$", message: message)]))
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return failure("file \"\(path)\" does not exist")
        }
        guard !isDirectory.boolValue else { return failure("\"\(path)\" is a directory, not a file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            return failure("file \"\(path)\" is not readable")
        }
        return .success(data)
    }
}
