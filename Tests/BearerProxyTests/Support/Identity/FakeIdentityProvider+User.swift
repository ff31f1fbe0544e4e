extension FakeIdentityProvider {
    /// A user whose refresh tokens the fake honours; the identity claims of their tokens; how they sign in
    /// interactively (native authentication, and as the browser user of the authorization endpoint). Requirements
    /// that stop a sign-in (MFA, registration, password reset) are knobs of the provider, not of the user.
    struct User: Sendable, Hashable {
        /// The object id (`oid`, and `uid` in `client_info`).
        var oid: String
        /// `name`.
        var name: String
        /// `preferred_username`.
        var preferredUsername: String
        /// `sub` (pairwise per application in Entra; fixed here).
        var sub: String
        /// The password native authentication's `password` grant checks (nil: none; such a user cannot sign in
        /// with a password).
        var password: String?
        /// How the user signs in through native authentication.
        var signInMethod: SignInMethod

        init(
            oid: String, name: String, preferredUsername: String, sub: String? = nil, password: String? = nil,
            signInMethod: SignInMethod = .password
        ) {
            self.oid = oid
            self.name = name
            self.preferredUsername = preferredUsername
            self.sub = sub ?? "sub-" + oid
            self.password = password
            self.signInMethod = signInMethod
        }

        /// Alice Contoso: signs in with `alicePassword`.
        static let alice = User(
            oid: "a11ce000-0000-4000-8000-00000000a11c", name: "Alice Contoso",
            preferredUsername: "alice@contoso.example", sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
            password: alicePassword, signInMethod: .password)
        /// Bob Contoso: signs in with an email one-time passcode (read it with `lastOneTimeCode(for:)`).
        static let bob = User(
            oid: "b0b00000-0000-4000-8000-000000000b0b", name: "Bob Contoso",
            preferredUsername: "bob@contoso.example", sub: "BBBBBBBBBBBBBBBBBBBBBIkzqFVrSaSaFHy782bbtaQ",
            signInMethod: .emailOneTimePasscode)
        /// Alice's password (test only).
        static let alicePassword = "correct horse battery staple"
    }
}
