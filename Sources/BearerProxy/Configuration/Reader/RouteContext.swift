/// What reading the routes needs to know from the rest of the file: the flow decides which route keys apply.
///
/// Fields stay `nil` when that part of the account is missing or invalid; flow-specific route checks are then
/// skipped rather than guessed.
struct RouteContext {
    var flow: AccountFlow?
    /// For the firebase flow: the sign-in provider.
    var firebaseProvider: FirebaseAccount.ProviderName?
    /// For the firebase flow with Microsoft: the account's scopes, which `provider-access` routes draw from.
    var firebaseScopes: ScopeSet?
    /// Inherited by routes without their own `tls`.
    var globalTLS = TLSSettings()
}
