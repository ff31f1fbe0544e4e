import NIOCore

/// Everything `FakeIdentityState` guards: the knobs, the refresh tokens and used assertion ids, the observations,
/// held responses, open connections and waiting tasks.
struct FakeIdentityData: Sendable {
    /// An injected failure, optionally only for requests whose scopes include `scope`.
    struct ScopedFailure: Sendable {
        var failure: FakeIdentityProvider.Failure
        var scope: String?
    }

    /// A task waiting for a condition.
    struct Waiter: Sendable {
        let condition: FakeIdentityState.Condition
        let continuation: CheckedContinuation<Void, any Error>
    }

    // MARK: Knobs
    var queuedFailures: [ScopedFailure] = []
    var persistentFailure: ScopedFailure?
    var discoveryFailure: FakeIdentityProvider.Failure?
    var expiresIn: Int
    var expiresInOverrides: [(scope: String, seconds: Int)] = []
    var refreshIn: Int?
    var scopeEchoes: [(scope: String, echo: String)] = []
    var rotateRefreshTokens: Bool
    var supersededRefreshTokens: FakeIdentityProvider.SupersededRefreshTokenPolicy
    var holding = false
    var held: [@Sendable () -> Void] = []

    // MARK: Identity state
    /// Raw refresh token → its record.
    var refreshTokens: [String: FakeIdentityRefreshToken] = [:]
    /// Raw refresh tokens in issue order.
    var refreshTokenOrder: [String] = []
    var users: [FakeIdentityProvider.User]
    var usedJTIs: Set<String> = []

    // MARK: Observations
    var tokenRequests: [RecordedTokenRequest] = []
    var discoveryRequests: [String] = []
    var lastAssertion: FakeIdentityProvider.DecodedAssertion?

    // MARK: Plumbing
    var openChannels: [Int: any Channel] = [:]
    var nextConnectionID = 0
    var waiters: [Int: Waiter] = [:]
    var nextWaiterID = 0
    var isShutDown = false

    init(configuration: FakeIdentityProvider.Configuration) {
        self.expiresIn = configuration.expiresIn
        self.refreshIn = configuration.refreshIn
        self.rotateRefreshTokens = configuration.rotateRefreshTokens
        self.supersededRefreshTokens = configuration.supersededRefreshTokens
        self.users = configuration.users
    }

    /// `expires_in` for a request with these scopes: the most recently set matching override, else the default.
    func expiresIn(for scopes: [String]) -> Int {
        self.expiresInOverrides.last { FakeIdentityScopes.matches(filter: $0.scope, scopes) }?.seconds ?? self.expiresIn
    }

    /// Removes and returns the first queued failure that applies to these scopes, else the persistent one if it
    /// applies.
    mutating func takeFailure(for scopes: [String]) -> FakeIdentityProvider.Failure? {
        if let index = self.queuedFailures.firstIndex(where: { FakeIdentityScopes.matches(filter: $0.scope, scopes) }) {
            return self.queuedFailures.remove(at: index).failure
        }
        if let persistent = self.persistentFailure, FakeIdentityScopes.matches(filter: persistent.scope, scopes) {
            return persistent.failure
        }
        return nil
    }

    /// Stores a new refresh token and returns its raw value.
    mutating func issueRefreshToken(
        for user: FakeIdentityProvider.User, clientID: String, generation: Int
    ) -> (raw: String, id: String) {
        let raw = "FakeRT." + FakeIdentityJWT.base64URL((0..<32).map { _ in UInt8.random(in: 0...255) })
        let id = "rt\(self.refreshTokenOrder.count + 1)"
        self.refreshTokens[raw] = FakeIdentityRefreshToken(
            id: id, user: user, clientID: clientID, generation: generation, status: .active)
        self.refreshTokenOrder.append(raw)
        if !self.users.contains(user) { self.users.append(user) }
        return (raw, id)
    }
}
