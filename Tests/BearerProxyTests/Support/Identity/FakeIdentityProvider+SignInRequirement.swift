extension FakeIdentityProvider {
    /// Something that stops a user's native-authentication sign-in after the credential checked out, set per user
    /// with `setMFARequired(_:for:)`, `setRegistrationRequired(_:for:)` and `setPasswordResetRequired(_:for:)`.
    /// Checked in this order (`passwordReset` only for the `password` grant).
    enum SignInRequirement: Sendable, Hashable, CaseIterable {
        /// The password must be reset: `invalid_request` 50142.
        case passwordReset
        /// A second factor is needed: `invalid_grant` 50076, suberror `mfa_required`, a new `continuation_token`.
        case mfa
        /// A strong authentication method must be registered first: `invalid_grant` 50079, suberror
        /// `registration_required`, a new `continuation_token`.
        case registration
    }
}
