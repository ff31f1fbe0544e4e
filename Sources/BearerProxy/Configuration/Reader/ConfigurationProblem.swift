/// One thing wrong with routes.json: where it is (a JSON path such as `routes[0].upstream`) and what is wrong.
///
/// Messages never contain secret values: they name environment variables, never their contents.
public struct ConfigurationProblem: Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is, e.g. `routes[1].scopes`; `$` means the document as a whole.
    public var path: String
    /// What is wrong and, where possible, how to fix it.
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, the form `bearer-proxy check` prints.
    public var description: String { "\(path): \(message)" }
}
