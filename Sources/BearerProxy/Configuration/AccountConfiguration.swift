/// The one account a configuration signs in with: its flow and that flow's validated settings.
public struct AccountConfiguration: Sendable, Hashable {
    /// One case per flow, so a flow's settings can only be what that flow needs.
    public var settings: AccountSettings

    /// The flow, derived from `settings` so the two can never disagree.
    public var flow: AccountFlow { settings.flow }

    public init(_ settings: AccountSettings) {
        self.settings = settings
    }

    /// The embedded default: the built-in offline issuer.
    public static let dev = AccountConfiguration(.dev)
}
