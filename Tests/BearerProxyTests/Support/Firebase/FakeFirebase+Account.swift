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
