import Foundation

/// The project's users: creating, inspecting, disabling, deleting; tokens for a signed-in start.
extension FakeFirebase {
    /// Creates an email + password user (no other provider) and returns its uid.
    @discardableResult
    func addPasswordUser(
        email: String, password: String, displayName: String? = nil, emailVerified: Bool = false
    ) -> String {
        self.state.mutate { data in
            data.createAccount(email: email, emailVerified: emailVerified, displayName: displayName, password: password)
                .localID
        }
    }

    /// Every account, in creation order.
    var accounts: [Account] {
        self.state.read { $0.orderedAccounts }
    }

    /// The account `localID`, if it exists.
    func account(_ localID: String) -> Account? {
        self.state.read { $0.accounts[localID] }
    }

    /// The account with this email (case-insensitive), if any.
    func account(email: String) -> Account? {
        self.state.read { $0.account(email: email) }
    }

    /// The account `user`'s Microsoft identity is linked to, if any.
    func account(linkedTo user: MicrosoftUser) -> Account? {
        self.state.read { $0.account(linkedTo: user.federatedID, providerID: "microsoft.com") }
    }

    /// Disables the account: sign-ins, links and refreshes answer `USER_DISABLED`.
    func disableUser(_ localID: String) {
        self.state.mutate { $0.accounts[localID]?.disabled = true }
    }

    /// Revokes every refresh token of the account (as a password change or Admin revocation does): they answer
    /// `TOKEN_EXPIRED`.
    func revokeRefreshTokens(for localID: String) {
        self.state.mutate { data in
            for (raw, token) in data.refreshTokens where token.localID == localID {
                data.refreshTokens[raw]?.revoked = true
            }
        }
    }

    /// Signs the account in directly (no request): a new refresh token and ID token, as after a sign-in with
    /// `signInProvider`. Nil if there is no such account. Use it to start a test signed in.
    func issueTokens(for localID: String, signInProvider: String = "password") -> (
        idToken: String, refreshToken: String
    )? {
        let now = Date()
        return self.state.mutate { data -> (idToken: String, refreshToken: String)? in
            guard let account = data.accounts[localID] else { return nil }
            let answer = self.state.operations.signIn(account, signInProvider: signInProvider, data: &data, now: now)
            guard let idToken = answer["idToken"] as? String, let refreshToken = answer["refreshToken"] as? String
            else { return nil }
            return (idToken, refreshToken)
        }
    }

    /// The most recently issued refresh token of the account that still works, if any.
    func latestRefreshToken(for localID: String) -> String? {
        self.state.read { data in
            data.refreshTokenOrder.last { raw in
                guard let token = data.refreshTokens[raw] else { return false }
                return token.localID == localID && !token.revoked
            }
        }
    }

    /// Whether `refreshToken` would be accepted now (issued, not revoked, account present and enabled).
    func isRefreshTokenValid(_ refreshToken: String) -> Bool {
        self.state.read { data in
            guard let token = data.refreshTokens[refreshToken], !token.revoked,
                let account = data.accounts[token.localID]
            else { return false }
            return !account.disabled
        }
    }
}

extension FakeFirebase {
    /// A Firebase user of the fake project: created by `addPasswordUser(email:password:)` or by a first
    /// `signInWithIdp`; linked to providers by sign-in or `linkMicrosoftUser(_:to:)`.
    struct Account: Sendable, Equatable {
        /// The Firebase uid (`localId`, the ID token's `sub` and `user_id`).
        var localID: String
        var email: String?
        var emailVerified: Bool
        var displayName: String?
        /// The password `signInWithPassword` checks (test only, kept in clear); nil: no password provider.
        var password: String?
        /// Set by `disableUser(_:)`: sign-ins and refreshes answer `USER_DISABLED`.
        var disabled = false
        /// Linked federated providers: provider id (`microsoft.com`) → federated id.
        var federatedIDs: [String: String] = [:]

        /// The sign-in methods this account has, as `verifiedProvider` lists them: `password` first, then the
        /// linked providers in order.
        var providers: [String] {
            (self.password == nil ? [] : ["password"]) + self.federatedIDs.keys.sorted()
        }
    }
}

extension FakeFirebase {
    /// The person who signs in at the fake Microsoft authorization endpoint: the claims of the Microsoft tokens
    /// and of `rawUserInfo`.
    struct MicrosoftUser: Sendable, Hashable {

        /// The object id (`oid`): the same for every application.
        var oid: String
        /// The directory (tenant) id (`tid`).
        var tid: String
        /// `preferred_username` (the sign-in name).
        var preferredUsername: String
        /// The email Microsoft reports (`email` claim, `mail` of `rawUserInfo`); nil: none.
        var email: String?
        /// Whether Firebase treats the email as verified by the provider. Microsoft emails are not, which is what
        /// makes `needConfirmation` happen when a user with that email already exists.
        var emailVerified: Bool
        /// `name` (display name).
        var name: String
        /// `sub` of the Microsoft ID token: pairwise per application, never equal to `oid`.
        var sub: String

        init(
            oid: String, tid: String, preferredUsername: String, email: String?, name: String, sub: String? = nil,
            emailVerified: Bool = false
        ) {
            self.oid = oid
            self.tid = tid
            self.preferredUsername = preferredUsername
            self.email = email
            self.emailVerified = emailVerified
            self.name = name
            self.sub = sub ?? "pairwise-" + String(oid.reversed()).replacingOccurrences(of: "-", with: "")
        }

        /// Firebase's provider uid for the account: the `oid`, except that a personal account's
        /// `00000000-0000-0000-xxxx-xxxxxxxxxxxx` becomes the 16 hex digits without dashes.
        var federatedID: String {
            let personalPrefix = "00000000-0000-0000-"
            guard self.oid.hasPrefix(personalPrefix) else { return self.oid }
            return String(self.oid.dropFirst(personalPrefix.count)).replacingOccurrences(of: "-", with: "")
        }

        /// Alice Contoso, a work account in the Contoso tenant.
        static let alice = MicrosoftUser(
            oid: "a11ce000-0000-4000-8000-00000000a11c", tid: "aaaabbbb-0000-cccc-1111-dddd2222eeee",
            preferredUsername: "alice@contoso.example", email: "alice@contoso.example", name: "Alice Contoso",
            sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ")
    }
}

/// Reading and checking the tokens the fake issues: what a Firebase-protected backend and a fake Graph API need.
extension FakeFirebase {
    /// The uid of a valid Firebase ID token of this project (HS256 signature by the fake, `iss`, `aud`, `exp` in
    /// the future); nil otherwise. What a backend's `verifyIdToken` would accept.
    func verifyIDToken(_ token: String) -> String? {
        self.state.operations.verifiedUID(of: token, now: Date())
    }

    /// The `oid` of a valid fake Graph access token (signature, `aud` `https://graph.microsoft.com`, `exp` in the
    /// future); nil otherwise. For a fake Graph `/v1.0/me`.
    func verifyGraphAccessToken(_ token: String) -> String? {
        guard let claims = FakeFirebaseJWT.verifiedClaims(token, key: FakeFirebaseJWT.microsoftKey),
            claims["aud"] as? String == "https://graph.microsoft.com",
            let expiry = claims["exp"] as? Int, expiry > Int(Date().timeIntervalSince1970)
        else { return nil }
        return claims["oid"] as? String
    }

    /// The claims of a Firebase ID token (unverified; any JWT, `alg:none` emulator tokens included).
    static func claims(ofIDToken token: String) -> [String: Any]? {
        FakeFirebaseJWT.unverifiedClaims(token)
    }

    /// The claims of a fake Microsoft token (`oauthAccessToken`, `oauthIdToken`), unverified.
    static func claims(ofMicrosoftToken token: String) -> [String: Any]? {
        FakeFirebaseJWT.unverifiedClaims(token)
    }
}
