// ConfigurationError, the ConfigurationProblem it lists, and the ProblemCollector that gathers them while
// reading: three small types that only exist together.

import BearerHTTP
import BearerJSON

/// Every problem found in routes.json, reported together so the user can fix them in one pass.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The problems in the order they were found (document order, object keys sorted).
    public var problems: [ConfigurationProblem]

    init(problems: [ConfigurationProblem]) {
        self.problems = problems
    }

    /// One problem per line, each as `path: message`.
    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}

/// One thing wrong with routes.json: where it is (a JSON path such as `routes[0].upstream`) and what is wrong.
///
/// Messages never contain secret values: they name environment variables, never their contents.
public struct ConfigurationProblem: Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is, e.g. `routes[1].scopes`; `$` means the document as a whole.
    public var path: String
    /// What is wrong and, where possible, how to fix it.
    public var message: String

    init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, the form `bearer-proxy check` prints.
    public var description: String { "\(path): \(message)" }
}

/// Gathers the problems found while reading routes.json, so that all of them are reported at once.
///
/// A class so every reader appends to the same list; it never leaves the thread that parses the file,
/// so it is deliberately not `Sendable`.
package final class ProblemCollector {
    package private(set) var problems: [ConfigurationProblem] = []

    package var isEmpty: Bool { problems.isEmpty }

    package func report(_ path: JSONPath, _ message: String) {
        problems.append(ConfigurationProblem(path: path.description, message: message))
    }

    init() {}
}
