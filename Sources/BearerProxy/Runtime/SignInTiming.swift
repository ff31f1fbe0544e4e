/// The waits of interactive sign-in: how long the browser flow waits for the redirect, and how the device flow
/// waits between polls. Tests shorten them; nothing else should.
public struct SignInTiming: Sendable {
    public var browserTimeout: Duration
    public var sleep: @Sendable (Duration) async throws -> Void

    public init(
        browserTimeout: Duration = .seconds(300),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.browserTimeout = browserTimeout
        self.sleep = sleep
    }
}
