extension FakeIdentityProvider {
    /// A client assertion as the fake decoded it (JSON kept as bytes so the value is `Sendable`).
    struct DecodedAssertion: Sendable {
        /// The header JSON.
        var headerJSON: [UInt8]
        /// The payload JSON.
        var claimsJSON: [UInt8]

        /// The header (`alg`, `typ`, `x5t#S256` / `x5t`, ...).
        var header: [String: Any] { FakeIdentityJWT.object(self.headerJSON) ?? [:] }
        /// The claims (`aud`, `iss`, `sub`, `jti`, `nbf`, `iat`, `exp`, ...).
        var claims: [String: Any] { FakeIdentityJWT.object(self.claimsJSON) ?? [:] }
    }
}
