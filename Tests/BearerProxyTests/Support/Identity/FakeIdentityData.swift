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
    var expiresIn: Int
    var refreshIn: Int?
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
    /// Resources whose on-behalf-of exchanges fail for want of consent.
    var consentMissing: Set<String> = []
    /// A claims challenge every on-behalf-of exchange answers with (`interaction_required`); nil: none.
    var onBehalfOfClaimsChallenge: String?

    init(configuration: FakeIdentityProvider.Configuration) {
        self.expiresIn = configuration.expiresIn
        self.refreshIn = configuration.refreshIn
        self.rotateRefreshTokens = configuration.rotateRefreshTokens
        self.supersededRefreshTokens = configuration.supersededRefreshTokens
        self.users = configuration.users
    }

    /// `expires_in` for a request with these scopes (the same for every scope set).
    func expiresIn(for scopes: [String]) -> Int {
        self.expiresIn
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

/// One native-authentication sign-in in progress: started by `/initiate`, moved on by `/challenge` and the token
/// endpoint. Each answer issues a new continuation token; only the latest one (`latestToken`) is accepted, until
/// `expiresAt` — the client must always send the latest.
struct FakeIdentityNativeFlow: Sendable {
    /// How far the flow has got.
    enum Stage: Sendable, Equatable {
        /// `/initiate` answered; `/challenge` comes next.
        case initiated
        /// `/challenge` answered with this method; the token endpoint (or `/challenge` again, to resend) comes next.
        case challenged(FakeIdentityProvider.SignInMethod)
        /// The credential checked out but this requirement stops the sign-in (the fake serves no `/introspect` or
        /// registration endpoints, so the flow ends here).
        case stopped(FakeIdentityProvider.SignInRequirement)
        /// Tokens were issued; the flow's tokens are used up.
        case completed
    }

    /// Who is signing in.
    var user: FakeIdentityProvider.User
    /// The client that started the flow.
    var clientID: String
    /// How far it has got.
    var stage: Stage
    /// The only continuation token accepted now.
    var latestToken: String
    /// When `latestToken` expires.
    var expiresAt: Date
    /// The one-time code "emailed" by the latest `/challenge` (OTP users); earlier codes are invalid.
    var oneTimeCode: String?
}

/// An authorization code the authorization endpoint issued, with what its redemption must match.
struct FakeIdentityAuthorizationCode: Sendable {
    /// Who signed in.
    var user: FakeIdentityProvider.User
    /// The client it was issued to.
    var clientID: String
    /// `redirect_uri` of the authorization request (the redemption must send the same, exactly).
    var redirectURI: String
    /// `code_challenge` (S256) of the authorization request.
    var codeChallenge: String
    /// `scope` of the authorization request (used when the redemption sends none).
    var scope: String
    /// `nonce` of the authorization request, put verbatim in the ID token.
    var nonce: String?
    /// When it stops being redeemable (10 minutes after issue).
    var expiresAt: Date
    /// Whether it was redeemed (a second redemption answers `invalid_grant` 54005).
    var redeemed = false
}

/// A refresh token the fake issued, known to tests by its label (`id`); the raw value is the key it is stored under.
struct FakeIdentityRefreshToken: Sendable {
    /// Where it stands.
    enum Status: Sendable, Equatable {
        /// Current.
        case active
        /// Rotated: a newer token was issued when it was redeemed. `remainingUses` nil: still valid without limit;
        /// otherwise how many more redemptions it allows (0: none).
        case superseded(remainingUses: Int?)
        /// Revoked by the test (`invalid_grant` 700082 / `bad_token`).
        case revoked
    }

    /// `"rt1"`, `"rt2"`, ... in issue order.
    var id: String
    /// Whose it is.
    var user: FakeIdentityProvider.User
    /// The client it was issued to.
    var clientID: String
    /// 1 for a bootstrap token, parent's + 1 for a rotated one.
    var generation: Int
    /// Where it stands.
    var status: Status
}

/// A requested `scope` value taken apart the way the Microsoft identity platform does: OpenID Connect scopes
/// aside, every other scope belongs to a resource (`api://todo/ToDoList.Read` → `api://todo`; a bare scope such as
/// `User.Read` → Microsoft Graph).
struct FakeIdentityScopes: Sendable {
    /// The scopes that name no resource.
    static let openIDScopes: Set<String> = ["openid", "profile", "offline_access", "email"]
    /// The resource of bare scopes.
    static let graphResource = "https://graph.microsoft.com"

    /// Every scope, in request order.
    let all: [String]
    /// The resource scopes (the non-OpenID ones), in request order.
    let resourceScopes: [String]
    /// The distinct resources, in order of first appearance.
    let resources: [String]

    init(_ scope: String) {
        self.all = scope.split(separator: " ").map(String.init)
        self.resourceScopes = self.all.filter { !Self.openIDScopes.contains($0) }
        var resources: [String] = []
        for resource in self.resourceScopes.map(Self.resource(of:)) where !resources.contains(resource) {
            resources.append(resource)
        }
        self.resources = resources
    }

    /// Whether `name` was requested.
    func contains(_ name: String) -> Bool {
        self.all.contains(name)
    }

    /// Whether a resource scope is `{resource}/.default`.
    var includesDefault: Bool {
        self.resourceScopes.contains { $0.hasSuffix("/.default") }
    }

    /// The permission names (`scp`): the part after the resource.
    var permissions: [String] {
        self.resourceScopes.map(Self.permission(of:))
    }

    /// The resource a scope belongs to: everything before the last `/` that follows the scheme or the first
    /// segment; Microsoft Graph for a bare scope.
    static func resource(of scope: String) -> String {
        guard let slash = self.lastSeparator(in: scope) else { return self.graphResource }
        return String(scope[..<slash])
    }

    /// The permission part of a scope (the scope itself when it is bare).
    static func permission(of scope: String) -> String {
        guard let slash = self.lastSeparator(in: scope) else { return scope }
        return String(scope[scope.index(after: slash)...])
    }

    /// Whether the scopes in `filter` (space-separated) are all among `scopes` (the knobs' and counters' rule).
    static func matches(filter: String?, _ scopes: [String]) -> Bool {
        guard let filter else { return true }
        return Set(filter.split(separator: " ").map(String.init)).isSubset(of: Set(scopes))
    }

    private static func lastSeparator(in scope: String) -> String.Index? {
        guard let slash = scope.lastIndex(of: "/") else { return nil }
        if let scheme = scope.range(of: "://"), slash < scheme.upperBound { return nil }
        return slash
    }
}
