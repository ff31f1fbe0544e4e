import Foundation

extension Configuration {
    /// Reads and validates the routes.json at `path`; relative file names inside it resolve against its directory.
    ///
    /// - Parameter environment: the process environment, used to check that variables named by `…Env` keys are set.
    /// - Throws: every problem found, each with its JSON path.
    public static func load(path: String, environment: [String: String]) throws(ConfigurationError) -> Configuration {
        let data: Data
        switch ConfigurationReader.readDocument(at: path) {
        case .success(let contents): data = contents
        case .failure(let error): throw error
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(data, environment: environment, baseDirectory: directory)
    }

    /// Validates routes.json content.
    ///
    /// - Parameters:
    ///   - environment: the process environment, used to check that variables named by `…Env` keys are set.
    ///   - baseDirectory: where relative file names (`caFile`, `certFile`, `keyFile`) resolve; default the
    ///     current directory.
    /// - Throws: every problem found, each with its JSON path.
    public static func parse(
        _ data: Data,
        environment: [String: String],
        baseDirectory: String? = nil
    ) throws(ConfigurationError) -> Configuration {
        let problems = ProblemCollector()
        let directory = baseDirectory ?? FileManager.default.currentDirectoryPath
        let reader = ConfigurationReader(problems: problems, environment: environment, baseDirectory: directory)
        switch JSONValue.parse(data) {
        case .failure(let error):
            throw ConfigurationError(problems: [ConfigurationProblem(path: "$", message: error.message)])
        case .success(let document):
            let configuration = reader.read(document)
            guard problems.isEmpty, let configuration else {
                // A reader that gives up must say why; this only guards against one that forgot to.
                let found =
                    problems.isEmpty ? [ConfigurationProblem(path: "$", message: "is not valid")] : problems.problems
                throw ConfigurationError(problems: found)
            }
            return configuration
        }
    }
}
