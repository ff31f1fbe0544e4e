/// Settings of the `command` flow: run a CLI that already has a session and read the token it prints.
public struct CommandAccount: Sendable, Hashable {
    /// How long the command may run when `timeoutSeconds` is not given.
    public static let defaultTimeout = Duration.seconds(30)

    /// The placeholders substituted in each argument.
    public static let placeholders: Set<String> = ["scopes", "resource"]

    /// The argument vector, run without a shell; `{scopes}` and `{resource}` are substituted.
    public var argv: [String]
    /// Default 30 seconds.
    public var timeout: Duration

    public init(argv: [String], timeout: Duration = CommandAccount.defaultTimeout) {
        self.argv = argv
        self.timeout = timeout
    }
}
