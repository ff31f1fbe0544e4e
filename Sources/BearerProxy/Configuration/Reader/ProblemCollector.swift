/// Gathers the problems found while reading routes.json, so that all of them are reported at once.
///
/// A class so every reader appends to the same list; it never leaves the thread that parses the file,
/// so it is deliberately not `Sendable`.
final class ProblemCollector {
    private(set) var problems: [ConfigurationProblem] = []

    var isEmpty: Bool { problems.isEmpty }

    func report(_ path: JSONPath, _ message: String) {
        problems.append(ConfigurationProblem(path: path.description, message: message))
    }
}
