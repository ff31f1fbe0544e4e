import Foundation

/// The account side of signInWithIdp (one account per email, as Firebase projects default to): link to the
/// account of `idToken`, sign in the account already linked, ask for confirmation when another account has the
/// email, or create an account.
extension FakeFirebaseOperations {
    /// Signs `identity` in. In order:
    /// 1. With `idToken` (link): the token's account (`INVALID_ID_TOKEN`, `TOKEN_EXPIRED`, `USER_NOT_FOUND`,
    ///    `USER_DISABLED`) gets the provider linked — unless another account has this federated id
    ///    (`FEDERATED_USER_ID_ALREADY_LINKED`) or the identity's email (`EMAIL_EXISTS`): 200 with `errorMessage`
    ///    and the credential when `returnIdpCredential`, else 400; or the account has another identity of this
    ///    provider (400 `PROVIDER_ALREADY_LINKED`). Tokens for that account; `isNewUser:false`; the
    ///    `pendingToken` is spent.
    /// 2. An account already linked to the federated id signs in (`USER_DISABLED` if disabled).
    /// 3. Another account has the email: if the provider verified it, that account is linked and signed in;
    ///    otherwise 200 `needConfirmation:true` with that account's `localId`, `verifiedProvider` (its sign-in
    ///    methods, e.g. `["password"]`), a `pendingToken` and the credential, and no Firebase tokens.
    /// 4. Else a new account (`isNewUser:true`), unless `autoCreate:false` (`USER_NOT_FOUND`).
    func federatedSignIn(
        _ identity: FakeFirebaseFederatedIdentity, idToken: String?, pendingToken: String?,
        returnIdpCredential: Bool, autoCreate: Bool, data: inout FakeFirebaseData, now: Date
    ) -> Result<[String: Any], FakeFirebaseError> {
        var answer = identity.members(oauthExpireIn: data.oauthExpireIn)
        let provider = identity.providerID
        let owner = data.account(linkedTo: identity.federatedID, providerID: provider)

        if let idToken {
            let account: FakeFirebase.Account
            switch self.account(ofIDToken: idToken, data: data, now: now) {
            case .failure(let error): return .failure(error)
            case .success(let found): account = found
            }
            // Production answers these two with 200 + errorMessage and the credential under returnIdpCredential.
            func conflict(_ code: String) -> Result<[String: Any], FakeFirebaseError> {
                guard returnIdpCredential else { return .failure(.bad(code)) }
                answer["errorMessage"] = code
                return .success(answer)
            }
            if let owner, owner.localID != account.localID { return conflict("FEDERATED_USER_ID_ALREADY_LINKED") }
            if let linked = account.federatedIDs[provider], linked != identity.federatedID {
                return .failure(.bad("PROVIDER_ALREADY_LINKED"))
            }
            if let email = identity.email, let other = data.account(email: email), other.localID != account.localID {
                return conflict("EMAIL_EXISTS")
            }
            data.accounts[account.localID]?.federatedIDs[provider] = identity.federatedID
            if account.email == nil { data.accounts[account.localID]?.email = identity.email }
            if let pendingToken { data.pendingTokens[pendingToken] = nil }
            return .success(self.signedIn(data.accounts[account.localID]!, answer, isNewUser: false, &data, now))
        }

        if let owner {
            guard !owner.disabled else { return .failure(.bad("USER_DISABLED")) }
            if let pendingToken { data.pendingTokens[pendingToken] = nil }
            return .success(self.signedIn(owner, answer, isNewUser: false, &data, now))
        }

        if let email = identity.email, let existing = data.account(email: email) {
            guard !existing.disabled else { return .failure(.bad("USER_DISABLED")) }
            if identity.emailVerified {
                data.accounts[existing.localID]?.federatedIDs[provider] = identity.federatedID
                if let pendingToken { data.pendingTokens[pendingToken] = nil }
                return .success(self.signedIn(data.accounts[existing.localID]!, answer, isNewUser: false, &data, now))
            }
            let token = pendingToken ?? "AMzJoS" + Self.randomString(100)
            data.pendingTokens[token] = identity
            answer["needConfirmation"] = true
            answer["localId"] = existing.localID
            answer["verifiedProvider"] = existing.providers.filter { $0 != provider }
            answer["pendingToken"] = token
            return .success(answer)
        }

        guard autoCreate else { return .failure(.bad("USER_NOT_FOUND")) }
        var account = data.createAccount(
            email: identity.email, emailVerified: identity.emailVerified, displayName: identity.displayName,
            password: nil)
        account.federatedIDs[provider] = identity.federatedID
        data.accounts[account.localID] = account
        if let pendingToken { data.pendingTokens[pendingToken] = nil }
        return .success(self.signedIn(account, answer, isNewUser: true, &data, now))
    }

    /// `answer` plus the Firebase session of `account` signed in with the identity's provider.
    private func signedIn(
        _ account: FakeFirebase.Account, _ answer: [String: Any], isNewUser: Bool, _ data: inout FakeFirebaseData,
        _ now: Date
    ) -> [String: Any] {
        let provider = answer["providerId"] as? String ?? "microsoft.com"
        var answer = answer
        answer.merge(self.signIn(account, signInProvider: provider, data: &data, now: now)) { _, new in new }
        answer["isNewUser"] = isNewUser
        if answer["displayName"] == nil, let name = account.displayName { answer["displayName"] = name }
        if answer["email"] == nil, let email = account.email { answer["email"] = email }
        return answer
    }
}
