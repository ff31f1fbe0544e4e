/// Every problem found in routes.json, reported together so the user can fix them in one pass.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The problems in the order they were found (document order, object keys sorted).
    public var problems: [ConfigurationProblem]

    public init(problems: [ConfigurationProblem]) {
        self.problems = problems
    }

    /// One problem per line, each as `path: message`.
    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
