import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The discovered routes (SPEC §6.3) as `status`, `token ROUTE` and `logout ROUTE` reach them: through the account
/// runtime's ``DiscoveredRouteTokens``.
extension AccountRuntime {
    /// The token cache of a discovered route; nil for another route, or for one that signs in at its own
    /// authorization server without a state directory.
    public func discoveredTokens(for route: Route) -> TokenCache? {
        guard case .discover = route.auth else { return nil }
        return discovered.caches(for: configuration)[route.prefix]
    }

    /// Forgets the route's stored sign-in (and, with `registration`, the client registered with its authorization
    /// server), then revokes the refresh token it held where the server offers revocation (RFC 7009). The local
    /// sign-out comes first and takes exactly what it removes, under the directory's lock: once it has landed no
    /// process sends or redeems those tokens, a revocation that fails afterwards leaves only tokens nobody holds, and
    /// a local sign-out that fails (a lock held too long) revokes nothing. Returns the issuer it was with and a line
    /// on the revocation; nil when nothing was signed in.
    public func forgetDiscovered(
        _ route: Route, registration: Bool
    ) async throws(StateError) -> (issuer: String, revocation: String)? {
        guard case .discover(let settings) = route.auth, let store = discovered.store,
            let key = try store.routeKey(upstream: route.upstream.url)
        else { return nil }
        // The registration's secret authenticates the revocation: read before the registration may be dropped.
        let registered = try store.registration(issuer: key.issuer)
        let removed = try store.updateSignIn(key) { stored -> PersistedDiscoveredSignIn? in
            defer { stored = nil }
            return stored
        }
        try store.setRouteKey(nil, upstream: route.upstream.url)
        // The DPoP key goes with the sign-in: nothing is bound to it any more, and the next sign-in makes a new one.
        try store.proofKeyFile(key).remove()
        if registration { try store.dropRegistration(issuer: key.issuer) }
        guard let removed, let refreshToken = removed.refreshToken else { return (key.issuer, "nothing to revoke") }
        let secret =
            removed.clientKind == "configured"
            ? discovered.clientSecret(settings)
            : registered.flatMap { $0.clientID == key.clientID ? $0.clientSecret : nil }
        let revocation = await DiscoveredTokenRequest.revoke(
            refreshToken, at: removed.revocationEndpoint, clientID: key.clientID, clientSecret: secret,
            provider: discovered.provider(caFile: route.tls.caFile),
            addresses: DiscoveredRouteTokens.addresses(of: route, settings: settings))
        return (key.issuer, revocation)
    }

    public func discoveredState(of route: Route) -> DiscoveredRouteState? {
        guard case .discover(let settings) = route.auth else { return nil }
        if settings.usesAccount, let account = discovered.accountSource { return accountState(of: route, account) }
        guard let store = discovered.store else {
            return DiscoveredRouteState(state: .needsSignIn, detail: "no state directory (--no-persist)")
        }
        // An answer the data plane has just heard is in the file before the file is read.
        discovered.flushAnswers()
        do {
            guard let key = try store.routeKey(upstream: route.upstream.url), var stored = try store.signIn(key)
            else { return DiscoveredRouteState(state: .needsSignIn) }
            // A refreshed sign-in this process could not write is newer than the file, and is the one it uses; one
            // another process holds is known by the lock it keeps meanwhile.
            var unsaved: DiscoveredRouteState.Unsaved?
            let held = discovered.unsavedSignIn(of: route)
            if let held, held.key == key, held.fileHeld == stored.refreshToken {
                stored = held.record
                unsaved = .init(heldBy: .thisProcess, failedWrites: held.failures, lastWriteError: held.lastError)
            } else if held?.key != key, store.isUnsavedElsewhere(key) {
                unsaved = .init(heldBy: .anotherProcess)
            }
            // Read from the file every process writes: a refusal `serve` met is there (``forgetTokens(because:)``).
            let hasAccessToken = stored.accessToken != nil && (stored.expiresOn.map { $0 > Date() } ?? false)
            let usable = stored.refreshToken != nil || hasAccessToken
            let stepUp = usable ? stored.stepUpScopes ?? [] : []
            return DiscoveredRouteState(
                state: !usable ? .needsSignIn : stepUp.isEmpty ? .signedIn : .needsStepUp,
                authorizationServer: key.issuer, clientKind: stored.clientKind, clientID: key.clientID,
                scopes: stored.grantedScopes ?? stored.scopes, stepUpScopes: stepUp,
                expiresOn: usable ? stored.expiresOn : nil,
                detail: usable
                    ? stepUp.isEmpty ? nil : "its upstream's last answer was 403 insufficient_scope"
                    : stored.refusal ?? "its sign-in has expired",
                unsaved: unsaved,
                // The key its tokens are proved with (RFC 9449), by thumbprint only.
                dpopKeyThumbprint: usable ? stored.proofKeyThumbprint : nil)
        } catch {
            return DiscoveredRouteState(state: .error, detail: "\(error)")
        }
    }

    /// A route whose authorization server is the account's own: signed in when the account is, with the scopes and
    /// expiry of the account's token for it once this process has discovered them (`/-/status`).
    private func accountState(
        of route: Route, _ account: DiscoveredRouteTokens.AccountSource
    ) -> DiscoveredRouteState {
        let target = discovered.accountTarget(of: route)
        let token = target.map { tokens.status(for: $0.scopes) }
        return DiscoveredRouteState(
            state: isSignedIn ? .signedIn : .needsSignIn,
            authorizationServer: target?.issuer ?? account.issuers().first, clientKind: "account",
            clientID: account.clientID, scopes: target?.scopes.scopes ?? [], expiresOn: token?.expiresOn,
            detail: isSignedIn ? nil : "it uses the account's sign-in")
    }
}
