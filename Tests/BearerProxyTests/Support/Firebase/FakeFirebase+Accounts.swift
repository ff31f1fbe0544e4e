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

    /// Links `user`'s Microsoft identity to the account `localID` (as a past sign-in would have).
    func linkMicrosoftUser(_ user: MicrosoftUser, to localID: String) {
        self.state.mutate { $0.accounts[localID]?.federatedIDs["microsoft.com"] = user.federatedID }
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

    /// Enables a disabled account again.
    func enableUser(_ localID: String) {
        self.state.mutate { $0.accounts[localID]?.disabled = false }
    }

    /// Deletes the account: its refresh tokens answer `USER_NOT_FOUND`.
    func deleteUser(_ localID: String) {
        self.state.mutate { data in
            data.accounts[localID] = nil
            data.accountOrder.removeAll { $0 == localID }
        }
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

    /// Makes one refresh token answer `TOKEN_EXPIRED`.
    func expireRefreshToken(_ refreshToken: String) {
        self.state.mutate { $0.refreshTokens[refreshToken]?.revoked = true }
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
