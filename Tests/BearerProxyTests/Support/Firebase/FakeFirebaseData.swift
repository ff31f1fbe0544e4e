import NIOCore

/// Everything `FakeFirebaseState` guards: the knobs, the project's accounts, the sign-in sessions, codes,
/// pending and refresh tokens, and the observations.
struct FakeFirebaseData: Sendable {
    // MARK: Knobs
    var microsoftUser: FakeFirebase.MicrosoftUser
    var authorizeOutcome: FakeFirebase.AuthorizeOutcome = .signIn
    var emulatorMode: Bool
    var emailEnumerationProtection: Bool
    var expiresIn: Int
    var oauthExpireIn: FakeFirebase.OAuthExpireIn
    /// Failures queued per endpoint (used in order).
    var failures: [FakeFirebase.Endpoint: [FakeFirebase.Failure]] = [:]

    // MARK: Project state
    /// Accounts by Firebase uid.
    var accounts: [String: FakeFirebase.Account] = [:]
    /// Firebase uids in creation order.
    var accountOrder: [String] = []
    /// createAuthUri sessions in issue order.
    var sessions: [FakeFirebaseSession] = []
    /// Microsoft authorization codes by value.
    var codes: [String: FakeFirebaseAuthorizationCode] = [:]
    /// `pendingToken` → the identity waiting to be linked.
    var pendingTokens: [String: FakeFirebaseFederatedIdentity] = [:]
    /// Raw refresh token → its record.
    var refreshTokens: [String: FakeFirebaseRefreshToken] = [:]
    /// Raw refresh tokens in issue order.
    var refreshTokenOrder: [String] = []

    // MARK: Observations
    var requests: [RecordedFirebaseRequest] = []
    var authURIs: [String] = []

    init(configuration: FakeFirebase.Configuration) {
        self.microsoftUser = configuration.microsoftUser
        self.emulatorMode = configuration.emulatorMode
        self.emailEnumerationProtection = configuration.emailEnumerationProtection
        self.expiresIn = configuration.expiresIn
        self.oauthExpireIn = configuration.oauthExpireIn
    }

    /// Removes and returns the next failure queued for `endpoint`, if any.
    mutating func takeFailure(at endpoint: FakeFirebase.Endpoint) -> FakeFirebase.Failure? {
        guard var queue = self.failures[endpoint], !queue.isEmpty else { return nil }
        let failure = queue.removeFirst()
        self.failures[endpoint] = queue
        return failure
    }

    /// The accounts in creation order.
    var orderedAccounts: [FakeFirebase.Account] {
        self.accountOrder.compactMap { self.accounts[$0] }
    }

    /// The account whose email is `email` (case-insensitive), if any.
    func account(email: String) -> FakeFirebase.Account? {
        self.orderedAccounts.first { $0.email?.lowercased() == email.lowercased() }
    }

    /// The account `federatedID` of `providerID` is linked to, if any.
    func account(linkedTo federatedID: String, providerID: String) -> FakeFirebase.Account? {
        self.orderedAccounts.first { $0.federatedIDs[providerID] == federatedID }
    }

    /// Adds an account with a fresh 28-character uid and returns it.
    mutating func createAccount(
        email: String?, emailVerified: Bool, displayName: String?, password: String?
    ) -> FakeFirebase.Account {
        var localID = FakeFirebaseOperations.randomString(28)
        while self.accounts[localID] != nil { localID = FakeFirebaseOperations.randomString(28) }
        let account = FakeFirebase.Account(
            localID: localID, email: email, emailVerified: emailVerified, displayName: displayName,
            password: password)
        self.accounts[localID] = account
        self.accountOrder.append(localID)
        return account
    }

    /// Stores a new refresh token for `localID` and returns its raw value (`AMf-vB…`, like production's).
    mutating func issueRefreshToken(localID: String, signInProvider: String, authTime: Int) -> String {
        let raw = "AMf-vB" + FakeFirebaseOperations.randomString(150)
        self.refreshTokens[raw] = FakeFirebaseRefreshToken(
            localID: localID, signInProvider: signInProvider, authTime: authTime)
        self.refreshTokenOrder.append(raw)
        return raw
    }
}

/// A `createAuthUri` answer `FakeFirebase` remembers: the sign-in it started, for `signInWithIdp` to match.
struct FakeFirebaseSession: Sendable {
    /// The `sessionId` answered (the request's, or a random one).
    var sessionID: String
    /// The GCIP `state` put in the `authUri`.
    var state: String
    /// The `continueUri` (Microsoft's `redirect_uri`, verbatim).
    var continueURI: String
    var providerID: String
    /// `openid profile email` plus the request's `oauthScope`.
    var scopes: [String]
    /// The request's `customParameter`.
    var customParameters: [String: String]
    /// The `authUri` answered.
    var authURI: String
    /// Set once a `signInWithIdp` succeeded with it: GCIP states are single-use.
    var consumed = false
}

/// A code the fake Microsoft authorization endpoint issued, for `signInWithIdp` to redeem once.
struct FakeFirebaseAuthorizationCode: Sendable {
    /// The `state` of the authorization request (not the one of a `.wrongState` redirect).
    var state: String
    /// The request's `redirect_uri`.
    var redirectURI: String
    /// Who signed in.
    var user: FakeFirebase.MicrosoftUser
    /// The request's `scope`, split.
    var scopes: [String]
    /// Set when redeemed (successfully or not past the lookup): a second use answers `INVALID_IDP_RESPONSE`.
    var used = false
}

/// What an IdP response established, before it is tied to a Firebase account: from a redeemed Microsoft code,
/// from emulator-style fake claims, or kept behind a `pendingToken` after `needConfirmation`.
struct FakeFirebaseFederatedIdentity: Sendable {
    var providerID: String
    /// The provider uid (`federatedId`, `firebase.identities[providerID]`).
    var federatedID: String
    var email: String?
    var emailVerified: Bool
    var displayName: String?
    /// `rawUserInfo`: JSON text.
    var rawUserInfo: String
    /// `oauthAccessToken`.
    var oauthAccessToken: String
    /// `oauthIdToken`, if any.
    var oauthIdToken: String?
    /// Whether the answer carries `oauthExpireIn` (not in emulator mode).
    var reportsExpireIn: Bool

    /// The IdP members of a signInWithIdp answer (no Firebase tokens).
    func members(oauthExpireIn: FakeFirebase.OAuthExpireIn) -> [String: Any] {
        var members: [String: Any] = [
            "kind": "identitytoolkit#VerifyAssertionResponse", "providerId": self.providerID,
            "federatedId": self.federatedID, "emailVerified": self.emailVerified, "rawUserInfo": self.rawUserInfo,
            "oauthAccessToken": self.oauthAccessToken,
        ]
        if let email = self.email { members["email"] = email }
        if let displayName = self.displayName { members["displayName"] = displayName }
        if let oauthIdToken = self.oauthIdToken { members["oauthIdToken"] = oauthIdToken }
        if self.reportsExpireIn { members["oauthExpireIn"] = oauthExpireIn.jsonValue }
        return members
    }
}

/// A Firebase refresh token `FakeFirebase` issued.
struct FakeFirebaseRefreshToken: Sendable {
    /// The Firebase uid it refreshes.
    var localID: String
    /// `firebase.sign_in_provider` of the ID tokens it yields (`password`, `microsoft.com`).
    var signInProvider: String
    /// `auth_time` of the ID tokens it yields (the sign-in's time, seconds since 1970).
    var authTime: Int
    /// Set by `revokeRefreshTokens(for:)` / `expireRefreshToken(_:)`: redeeming answers `TOKEN_EXPIRED`.
    var revoked = false
}
