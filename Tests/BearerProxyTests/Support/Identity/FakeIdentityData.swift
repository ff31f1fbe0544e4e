import Foundation
import NIOCore

/// Everything `FakeIdentityState` guards: the knobs, the refresh tokens and used assertion ids, the interactive
/// flows (native authentication, device codes, authorization codes), the observations and held responses.
struct FakeIdentityData: Sendable {
    /// An injected failure, optionally only for requests whose scopes include `scope`.
    struct ScopedFailure: Sendable {
        var failure: FakeIdentityProvider.Failure
        var scope: String?
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

    // MARK: Interactive knobs
    /// Failures queued per interactive endpoint (used in order).
    var interactiveFailures: [FakeIdentityProvider.InteractiveEndpoint: [FakeIdentityProvider.Failure]] = [:]
    /// User `oid` → what stops their native sign-in.
    var signInRequirements: [String: Set<FakeIdentityProvider.SignInRequirement>] = [:]
    /// Lifetime of a continuation token (seconds).
    var continuationTokenLifetime = 600
    /// `expires_in` of device codes (seconds).
    var deviceCodeLifetime = 900
    /// `interval` of device codes (seconds).
    var deviceCodeInterval = 5
    /// Whether a poll sooner than `interval` after the previous one answers `slow_down`.
    var devicePollIntervalEnforced = false
    /// Scripted answers for the next device-code polls.
    var scriptedDevicePolls: [FakeIdentityProvider.DevicePollAnswer] = []
    /// What a valid authorization request gets.
    var authorizeOutcome: FakeIdentityProvider.AuthorizeOutcome = .signIn
    /// Who signs in at the authorization endpoint.
    var browserUser: FakeIdentityProvider.User = .alice

    // MARK: Identity state
    /// Raw refresh token → its record.
    var refreshTokens: [String: FakeIdentityRefreshToken] = [:]
    /// Raw refresh tokens in issue order.
    var refreshTokenOrder: [String] = []
    var users: [FakeIdentityProvider.User]
    var usedJTIs: Set<String> = []
    /// Native-authentication flows by id.
    var nativeFlows: [Int: FakeIdentityNativeFlow] = [:]
    /// Every continuation token issued → its flow's id.
    var continuationTokens: [String: Int] = [:]
    /// User `oid` → the one-time codes "emailed" to them, in order.
    var sentOneTimeCodes: [String: [String]] = [:]
    /// Device authorizations in issue order.
    var deviceAuthorizations: [FakeIdentityProvider.DeviceAuthorization] = []
    /// Authorization codes by value.
    var authorizationCodes: [String: FakeIdentityAuthorizationCode] = [:]

    // MARK: Observations
    var tokenRequests: [RecordedTokenRequest] = []
    var discoveryRequests: [String] = []
    var lastAssertion: FakeIdentityProvider.DecodedAssertion?
    var nativeRequests: [RecordedNativeRequest] = []
    var deviceCodeRequests: [[String: String]] = []
    var devicePollCount = 0
    var authorizeRequests: [[String: String]] = []
    var revocations: [RecordedRevocation] = []

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

    /// Removes and returns the next failure queued for `endpoint`, if any.
    mutating func takeFailure(at endpoint: FakeIdentityProvider.InteractiveEndpoint) -> FakeIdentityProvider.Failure? {
        guard var queue = self.interactiveFailures[endpoint], !queue.isEmpty else { return nil }
        let failure = queue.removeFirst()
        self.interactiveFailures[endpoint] = queue
        return failure
    }

    /// The known user whose `preferred_username` is `username` (case-insensitive), if any.
    func user(named username: String) -> FakeIdentityProvider.User? {
        self.users.first { $0.preferredUsername.lowercased() == username.lowercased() }
    }

    /// Adds `user`, replacing a known user with the same `oid`.
    mutating func register(_ user: FakeIdentityProvider.User) {
        if let index = self.users.firstIndex(where: { $0.oid == user.oid }) {
            self.users[index] = user
        } else {
            self.users.append(user)
        }
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
