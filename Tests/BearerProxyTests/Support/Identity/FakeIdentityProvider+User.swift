extension FakeIdentityProvider {
    /// A user whose refresh tokens the fake honours; the identity claims of their tokens.
    struct User: Sendable, Hashable {
        /// The object id (`oid`, and `uid` in `client_info`).
        var oid: String
        /// `name`.
        var name: String
        /// `preferred_username`.
        var preferredUsername: String
        /// `sub` (pairwise per application in Entra; fixed here).
        var sub: String

        init(oid: String, name: String, preferredUsername: String, sub: String? = nil) {
            self.oid = oid
            self.name = name
            self.preferredUsername = preferredUsername
            self.sub = sub ?? "sub-" + oid
        }

        /// Alice Contoso.
        static let alice = User(
            oid: "a11ce000-0000-4000-8000-00000000a11c", name: "Alice Contoso",
            preferredUsername: "alice@contoso.example", sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ")
        /// Bob Contoso.
        static let bob = User(
            oid: "b0b00000-0000-4000-8000-000000000b0b", name: "Bob Contoso",
            preferredUsername: "bob@contoso.example", sub: "BBBBBBBBBBBBBBBBBBBBBIkzqFVrSaSaFHy782bbtaQ")
    }
}
