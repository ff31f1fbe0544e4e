import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a discovered route's tokens come from in the data plane (SPEC §6.3): the sign-in `login ROUTE` stored under
/// (issuer, client, resource) — never the account's — refreshed with its own refresh token at its own token endpoint,
/// with the same `resource`. The redemption is a critical section per machine (the sign-in's ``RedemptionLock``): under
/// it the file is read again, a token another process obtained is taken over, and a rotated refresh token is written
/// before the lock is let go. A token the upstream refused sends the route through discovery again first
/// (``RouteRediscovery``).
package struct DiscoveredRouteFlow: SignInFlow {
    package let route: String
    package let upstream: String
    package let store: DiscoveredSignInStore
    package let provider: IdentityProviderClient
    /// The route's SSRF rule: the stored token endpoint is judged again, and pinned, for each refresh — the name it was
    /// judged on at sign-in may resolve elsewhere by now.
    package let addresses: AddressPolicy
    /// Discovery again on a refused token; nil: the stored metadata is used as it is.
    let rediscovery: RouteRediscovery?
    /// The secret of the route's configured client (from its `clientSecretEnv`); nil for a public client.
    package let clientSecret: String?
    package let logger: Logger
    package let now: @Sendable () -> Date
    /// Given when the proxy shuts down: a wait for a sign-in in progress ends then; nil: never.
    let closing: ShutdownNotice?
    /// For a route with `"signIn": "auto"`: asks `serve` to open the sign-in in the browser, and says what the
    /// person at the machine should do — once discovery has told whether a tab opens; nil: only `login ROUTE` signs in.
    /// Asked with no lock held.
    let startSignIn: (@Sendable () async -> String)?
    /// For a route with `"stepUp": "auto"`: asks `serve` to open the sign-in for a step-up's wider scopes and waits
    /// until it is stored — nil — or says why it was not; nil: only `login ROUTE --scopes` steps up.
    package let stepUp: (@Sendable (StepUpRequest) async -> String?)?
    /// The token this flow last handed out, and whether the upstream refused it (`invalid_token`, told through the
    /// cache's ``TokenCacheChange/rejected(value:)``): asked again while the file still holds a refused token
    /// fresh, taking it over again would only be refused again. One dropped for another reason (a step-up's `403`)
    /// is taken over again until a new sign-in replaces it in the file.
    package let served = ServedToken()
    /// The refreshed sign-in this process could not write, held and used until a write lands (disk full).
    package let unsaved: UnsavedDiscoveredSignIn
    /// The DPoP bindings of the sign-ins this route refreshed, each with the nonces its server gave (RFC 9449 §8).
    let proofs = ProofBindings()

    /// One ``DPoPBinding`` per sign-in, kept so that the `DPoP-Nonce` of one refresh goes with the next.
    final class ProofBindings: Sendable {
        private let bindings = Mutex<[DiscoveredSignInKey: DPoPBinding]>([:])

        /// The binding of the sign-in under `key`, whose key lives beside it in `store`.
        func binding(
            for key: DiscoveredSignInKey, store: DiscoveredSignInStore, now: @escaping @Sendable () -> Date
        ) -> DPoPBinding {
            bindings.withLock { bindings in
                if let known = bindings[key] { return known }
                // `dpop`: the sign-in was made with proofs, and its refresh token is bound to the key (RFC 9449 §5).
                let made = DPoPBinding(preference: .dpop, keyFile: store.proofKeyFile(key), now: now)
                bindings[key] = made
                return made
            }
        }

        init() {}
    }

    package final class ServedToken: Sendable {
        private let value = Mutex<(token: String?, rejected: Bool)>((nil, false))

        func wasRejected(_ token: String) -> Bool { value.withLock { $0.token == token && $0.rejected } }
        /// Whether the upstream refused the last token handed out.
        var lastWasRejected: Bool { value.withLock { $0.token != nil && $0.rejected } }
        func set(_ token: String) { value.withLock { $0 = (token, false) } }
        package func reject(_ token: String) {
            value.withLock { if $0.token == token { $0.rejected = true } }
        }

        init() {}
    }

    package var name: String { "discover" }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        if let wanted = request.stepUp {
            // The new sign-in is stored like `login ROUTE --scopes`'s, and read below like any other.
            guard let stepUp else { throw .signInRequired(reason: "serve opens no sign-in for more scopes here") }
            if let refusal = await stepUp(wanted) { throw .signInRequired(reason: refusal) }
        }
        try await awaitSignInInProgress()
        let routeKey: DiscoveredSignInKey?
        do {
            routeKey = try store.routeKey(upstream: upstream)
        } catch {
            throw .misconfigured(reason: "\(error)")
        }
        guard let key = routeKey else { throw await notSignedIn("nobody has signed in") }
        let confirmed = try await rediscoverIfRefused(key, request: request)
        let redeemed = try await store.redemptionLock(key).withLock {
            outcome async throws(TokenError) -> Redeemed in
            if outcome == .cancelled {
                throw .providerUnavailable(
                    reason: "cancelled while waiting for the redemption lock", retryAfterSeconds: 1)
            }
            if outcome != .held {
                logger.warning("redeeming \(route)'s refresh token without its redemption lock: \(outcome)")
            }
            return try await underLock(key, request: request, confirmed: confirmed)
        }
        switch redeemed {
        case .token(let token): return token
        case .notSignedIn(let why): throw await notSignedIn(why)
        }
    }

    /// What a redemption came to: a token, or why the route needs a sign-in — asked for (``startSignIn``) once the
    /// lock is let go, so that no other process waits on it meanwhile.
    private enum Redeemed {
        case token(AccessToken)
        case notSignedIn(String)
    }

    /// Waits (at most ``RedemptionLock/maximumWait``) while a `login ROUTE` for this route is signing in on this
    /// machine, so that the sign-in it is about to store is used rather than answered around: the request itself
    /// is still bounded by its route's time limit, and the token request goes on for the next one.
    /// A shutdown (``closing``) ends a wait at once: the request behind it is answered (503) instead of holding
    /// the drain for a sign-in that may never come. A lock that is free is still taken during the drain, so a
    /// request in flight then is served as before.
    private func awaitSignInInProgress() async throws(TokenError) {
        let lock = store.routeSignInLock(upstream: upstream)
        let (route, logger, closing) = (route, logger, closing)
        // The lock's task says whether its wait was cut short; the notice's says nothing (nil) and ends the wait.
        let interrupted = await withTaskGroup(of: Bool?.self) { group -> Bool in
            group.addTask {
                await lock.withLock(
                    waiting: {
                        logger.info("\(route): waiting for the sign-in in progress on this machine (login \(route))")
                    }
                ) { outcome in outcome == .cancelled }
            }
            if let closing {
                group.addTask {
                    await closing.wait()
                    return nil
                }
            }
            while let next = await group.next() {
                group.cancelAll()
                if let interrupted = next { return interrupted }
            }
            return false
        }
        if interrupted { throw .providerUnavailable(reason: "the proxy is shutting down", retryAfterSeconds: 1) }
    }

    /// When the upstream refused the token this flow handed out and the file still holds it fresh, discovery runs
    /// again (at most once per ``RouteRediscovery/interval``, which logs and counts it) before anything is sent to
    /// the authorization server: the same server confirms the sign-in (with its current endpoints, returned);
    /// another one gets nothing of it and the route needs a sign-in there; a discovery that failed for now leaves the
    /// metadata stored with the sign-in in use, one that refused the metadata leaves nothing.
    private func rediscoverIfRefused(
        _ key: DiscoveredSignInKey, request: TokenRequest
    ) async throws(TokenError) -> DiscoveredAuthorization? {
        guard let rediscovery, let stored = try? store.signIn(key),
            let token = DiscoveredTokenRequest.accessToken(stored, scopes: request.scopes),
            token.isUsable(at: now()), token.refreshOn > now(), served.wasRejected(token.value)
        else { return nil }
        switch await rediscovery.verdict(on: key, at: now()) {
        case .confirmed(let found):
            return found
        case .unavailable:
            return nil
        case .refused(let error):
            throw .signInRequired(
                reason: "discovery now refuses its upstream's metadata: \(error.explanation) Nothing stored is "
                    + "used. Run: bearer-proxy discover \(route)")
        case .changed(let issuer, let resource):
            do {
                // The route no longer uses that sign-in; one a `login` made meanwhile is left alone.
                if try store.routeKey(upstream: upstream) == key { try store.setRouteKey(nil, upstream: upstream) }
            } catch {
                logger.error("\(route): the former authorization server's sign-in could not be set aside: \(error)")
            }
            let change =
                issuer != key.issuer
                ? "names another authorization server (\(DiscoveryError.shown(issuer))) than \(key.issuer)"
                : "describes another resource (\(DiscoveryError.shown(resource))) than \(key.resource)"
            throw await notSignedIn("its upstream now \(change), and nothing of that sign-in is used there")
        }
    }

    private func underLock(
        _ key: DiscoveredSignInKey, request: TokenRequest, confirmed: DiscoveredAuthorization?
    ) async throws(TokenError) -> Redeemed {
        var stored: PersistedDiscoveredSignIn
        /// The refresh token the file holds now: what a write of this redemption's outcome must still find there.
        let fileHeld: String?
        let client: DiscoveredClient
        do {
            let file = try store.signIn(key)
            // A rotation this process could not write is newer than the file, unless a sign-in or sign-out has
            // replaced the refresh token it came from since.
            guard let signIn = unsaved.newer(than: file, key: key) ?? file else {
                return .notSignedIn("nobody has signed in")
            }
            stored = signIn
            fileHeld = file?.refreshToken
            // Another process may have refreshed meanwhile: its token is taken over, not asked for again.
            if let token = DiscoveredTokenRequest.accessToken(stored, scopes: request.scopes),
                token.isUsable(at: now()), token.refreshOn > now(), !served.wasRejected(token.value)
            {
                served.set(token.value)
                return .token(token)
            }
            // Nothing to redeem: said before anything else (a registration dropped with the refused tokens).
            guard stored.refreshToken != nil else { return endWithoutRefreshToken(key, stored, request) }
            if stored.clientKind == DiscoveredClient.Kind.metadataDocument.rawValue {
                // A public client whose id is its document's URL: nothing but the id to send.
                client = DiscoveredClient(id: key.clientID, kind: .metadataDocument)
            } else if stored.clientKind == DiscoveredClient.Kind.dynamic.rawValue {
                guard let registration = try store.registration(issuer: key.issuer),
                    registration.clientID == key.clientID
                else { return .notSignedIn("its client registration is gone") }
                client = DiscoveredClient(id: key.clientID, secret: registration.clientSecret, kind: .dynamic)
            } else {
                client = DiscoveredClient(
                    id: key.clientID, secret: clientSecret, kind: .configured,
                    authentication: stored.tokenEndpointAuthMethod.flatMap(DiscoveredClient.Authentication.init)
                        ?? .basic)
            }
        } catch {
            throw .misconfigured(reason: "\(error)")
        }
        guard let refreshToken = stored.refreshToken else { return endWithoutRefreshToken(key, stored, request) }
        if !unsaved.holds(key), store.isUnsavedElsewhere(key) {
            // The file's refresh token is retired: the process that holds the newest one alone may redeem it.
            throw .providerUnavailable(
                reason: "another bearer-proxy process on this machine holds this route's newest refresh token, which "
                    + "it could not save yet (its write failed); it alone uses it until it is saved",
                retryAfterSeconds: 5)
        }
        if let confirmed {
            // The authorization server's current endpoints, confirmed just now, replace the stored ones.
            stored.keep(confirmed)
        }
        let tokenEndpoint: PinnedURL
        do {
            tokenEndpoint = try await addresses.pin(stored.tokenEndpoint, role: "token endpoint")
        } catch {
            logger.error("\(route): the refresh token was not sent: \(error.explanation)")
            throw error.tokenError
        }
        // A sign-in made with DPoP proofs refreshes with a proof of the same key: a public client's refresh token is
        // bound to it (RFC 9449 §5), and a new key would only have it refused.
        var dpop: DPoPBinding?
        if let thumbprint = stored.proofKeyThumbprint {
            let binding = proofs.binding(for: key, store: store, now: now)
            guard binding.keyFile.storedKey()?.thumbprint == thumbprint else {
                return .notSignedIn("the DPoP key its tokens are bound to is gone from the state directory")
            }
            dpop = binding
        }
        let issued = now()
        let response: TokenResponse
        do {
            response = try await provider.requestToken(
                at: tokenEndpoint,
                form: DiscoveredTokenRequest.refresh(refreshToken, resource: key.resource, client: client),
                basicCredentials: client.basicCredentials, dpop: dpop)
        } catch .rejected(let failure) where failure.error == "invalid_grant" {
            unsaved.resolve(key)
            let refusal = "its refresh token was refused (\(failure.reason))"
            forget(key, redeemed: fileHeld, because: refusal, registration: false)
            return .notSignedIn(refusal)
        } catch .rejected(let failure) where failure.error == "invalid_client" {
            // A stale registration: dropped, so that the next `login` registers again.
            let refusal = "the authorization server no longer knows its client (invalid_client)"
            unsaved.resolve(key)
            forget(key, redeemed: fileHeld, because: refusal, registration: client.kind == .dynamic)
            return .notSignedIn(refusal)
        } catch {
            throw error.tokenError
        }
        var updated = stored
        DiscoveredTokenRequest.record(response, into: &updated, at: issued)
        let written: DiscoveredSignInStore.SignInWrite
        do {
            written = try store.replaceSignIn(key, with: updated, ifStillHolding: [fileHeld, refreshToken])
            unsaved.resolve(key)
        } catch {
            // The authorization server has retired the file's refresh token: memory's is the only one that works,
            // so it is kept, used, and written again until it lands (``retryUnsaved()``).
            unsaved.keep(
                updated, key: key, fileHeld: fileHeld, error: "\(error)", holdAt: store.unsavedLockPath(key))
            logger.error(
                "\(route): the refreshed sign-in could not be stored: \(error); the refresh token in memory stays the one in use and is written again until it is saved"
            )
            written = .written
        }
        if case .replacedMeanwhile(let current) = written {
            // A `login ROUTE` (or `logout ROUTE`) landed while the refresh was under way: the person's sign-in
            // stands, and this refresh's tokens — of the grant it replaced — are dropped.
            logger.notice(
                "\(route): a sign-in was stored while its refresh was under way; the refresh's tokens are dropped and the stored sign-in is used"
            )
            return use(current, request)
        }
        guard let token = DiscoveredTokenRequest.accessToken(updated, scopes: request.scopes) else {
            throw .providerUnavailable(reason: "the token response had no access token", retryAfterSeconds: 5)
        }
        served.set(token.value)
        return .token(token)
    }

    /// What the sign-in another process stored (nil: none) gives this request: its access token when it is usable
    /// and was not refused here; else the route needs a sign-in.
    private func use(_ current: PersistedDiscoveredSignIn?, _ request: TokenRequest) -> Redeemed {
        guard let current else { return .notSignedIn("it was signed out while its token was being refreshed") }
        guard let token = DiscoveredTokenRequest.accessToken(current, scopes: request.scopes),
            token.isUsable(at: now()), !served.wasRejected(token.value)
        else { return .notSignedIn(current.refusal ?? "its sign-in has expired") }
        served.set(token.value)
        return .token(token)
    }

    /// What a sign-in without a refresh token comes to: its access token while the upstream has not refused it and
    /// it is usable (due for a refresh that cannot be made, it is still sent until its margin); else the route needs
    /// a sign-in, saying whether the token was refused — then forgotten in the file, so that every process and
    /// `status` say so — or has expired.
    private func endWithoutRefreshToken(
        _ key: DiscoveredSignInKey, _ stored: PersistedDiscoveredSignIn, _ request: TokenRequest
    ) -> Redeemed {
        guard let token = DiscoveredTokenRequest.accessToken(stored, scopes: request.scopes) else {
            return .notSignedIn(stored.refusal ?? "its sign-in has expired")
        }
        if served.wasRejected(token.value) {
            let refusal = "its upstream refused its access token, and it has no refresh token to get another"
            forget(key, refused: token.value, because: refusal)
            return .notSignedIn(refusal)
        }
        guard token.isUsable(at: now()) else { return .notSignedIn("its sign-in has expired") }
        served.set(token.value)
        return .token(token)
    }

    /// Forgets the tokens (and the registration) the authorization server refused, noting why — only when the file
    /// still holds the refresh token that was `redeemed`: a sign-in stored meanwhile (a `login` in another terminal)
    /// is not the one refused.
    private func forget(_ key: DiscoveredSignInKey, redeemed: String?, because refusal: String, registration: Bool) {
        do {
            let forgotten = try store.updateSignIn(key) { stored -> Bool in
                guard stored?.refreshToken == redeemed else { return false }
                stored?.forgetTokens(because: refusal)
                return true
            }
            // Only the registration that was refused: one a `login` made meanwhile has another client id.
            if registration, forgotten, try store.registration(issuer: key.issuer)?.clientID == key.clientID {
                try store.dropRegistration(issuer: key.issuer)
            }
        } catch {
            logger.error("\(route): the refused sign-in could not be forgotten: \(error)")
        }
    }

    /// Forgets the access token the upstream `refused` of a sign-in without a refresh token, noting why — only when
    /// the file still holds that token.
    private func forget(_ key: DiscoveredSignInKey, refused: String, because refusal: String) {
        do {
            try store.updateSignIn(key) { stored in
                guard stored?.refreshToken == nil, stored?.accessToken == refused else { return }
                stored?.forgetTokens(because: refusal)
            }
        } catch {
            logger.error("\(route): the refused sign-in could not be forgotten: \(error)")
        }
    }

    /// The route needs a sign-in — which, for a route with `"signIn": "auto"`, `serve` opens now.
    private func notSignedIn(_ why: String) async -> TokenError {
        // The route is named by whoever shows the reason (the problem's detail, `token ROUTE`'s error).
        if let startSignIn { return .signInRequired(reason: "\(why); \(await startSignIn())") }
        return .signInRequired(reason: "\(why). Run: bearer-proxy login \(route)")
    }

    package init(
        route: String, upstream: String, store: DiscoveredSignInStore, provider: IdentityProviderClient,
        addresses: AddressPolicy, rediscovery: RouteRediscovery? = nil, clientSecret: String? = nil, logger: Logger,
        now: @escaping @Sendable () -> Date, closing: ShutdownNotice? = nil,
        startSignIn: (@Sendable () async -> String)? = nil, stepUp: (@Sendable (StepUpRequest) async -> String?)? = nil,
        unsavedChanged: @escaping @Sendable (Bool) -> Void = { _ in }
    ) {
        self.unsaved = UnsavedDiscoveredSignIn(heldChanged: unsavedChanged)
        self.startSignIn = startSignIn
        self.stepUp = stepUp
        self.closing = closing
        self.clientSecret = clientSecret
        self.route = route
        self.upstream = upstream
        self.store = store
        self.provider = provider
        self.addresses = addresses
        self.rediscovery = rediscovery
        self.logger = logger
        self.now = now
    }
}
