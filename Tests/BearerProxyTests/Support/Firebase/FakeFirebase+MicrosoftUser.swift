extension FakeFirebase {
    /// The person who signs in at the fake Microsoft authorization endpoint: the claims of the Microsoft tokens
    /// and of `rawUserInfo`.
    struct MicrosoftUser: Sendable, Hashable {
        /// The directory (tenant) id of personal Microsoft accounts.
        static let personalTenantID = "9188040d-6c67-4c5b-b112-36a304b66dad"

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

        /// Whether this is a personal Microsoft account (`tid` = `personalTenantID`).
        var isPersonal: Bool { self.tid == Self.personalTenantID }

        /// Alice Contoso, a work account in the Contoso tenant.
        static let alice = MicrosoftUser(
            oid: "a11ce000-0000-4000-8000-00000000a11c", tid: "aaaabbbb-0000-cccc-1111-dddd2222eeee",
            preferredUsername: "alice@contoso.example", email: "alice@contoso.example", name: "Alice Contoso",
            sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ")
        /// Pat, a personal Microsoft account (federated id `4b2eabcdef012345`).
        static let personal = MicrosoftUser(
            oid: "00000000-0000-0000-4b2e-abcdef012345", tid: personalTenantID,
            preferredUsername: "pat@outlook.example", email: "pat@outlook.example", name: "Pat Personal",
            sub: "PPPPPPPPPPPPPPPPPPPPPIkzqFVrSaSaFHy782bbtaQ")
    }
}
