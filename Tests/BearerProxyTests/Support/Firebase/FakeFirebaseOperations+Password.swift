import Foundation

/// `accounts:signInWithPassword`.
extension FakeFirebaseOperations {
    /// The answer to signInWithPassword: 200 `{kind:"identitytoolkit#VerifyPasswordResponse", localId, email,
    /// displayName ("" when none), idToken, registered:true, refreshToken, expiresIn}`. Errors (400): no `email`
    /// → `MISSING_EMAIL`; no `password` → `MISSING_PASSWORD`; no `@` → `INVALID_EMAIL`; unknown email →
    /// `EMAIL_NOT_FOUND`; wrong password (or an account without one) → `INVALID_PASSWORD` — both
    /// `INVALID_LOGIN_CREDENTIALS` under email enumeration protection; then a disabled account → `USER_DISABLED`
    /// (checked after the password, so it reveals nothing to a wrong one).
    func signInWithPassword(_ body: [String: Any], data: inout FakeFirebaseData, now: Date) -> Result<
        [String: Any], FakeFirebaseError
    > {
        guard let email = body["email"] as? String, !email.isEmpty else { return .failure(.bad("MISSING_EMAIL")) }
        guard let password = body["password"] as? String, !password.isEmpty else {
            return .failure(.bad("MISSING_PASSWORD"))
        }
        guard email.contains("@") else { return .failure(.bad("INVALID_EMAIL")) }
        let protected = data.emailEnumerationProtection
        guard let account = data.account(email: email) else {
            return .failure(.bad(protected ? "INVALID_LOGIN_CREDENTIALS" : "EMAIL_NOT_FOUND"))
        }
        guard account.password == password else {
            return .failure(.bad(protected ? "INVALID_LOGIN_CREDENTIALS" : "INVALID_PASSWORD"))
        }
        guard !account.disabled else { return .failure(.bad("USER_DISABLED")) }
        var answer = self.signIn(account, signInProvider: "password", data: &data, now: now)
        answer["kind"] = "identitytoolkit#VerifyPasswordResponse"
        answer["email"] = account.email ?? email
        answer["displayName"] = account.displayName ?? ""
        answer["registered"] = true
        return .success(answer)
    }
}
