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

/// Where a discovered route's tokens come from in the data plane (#25 item 6): the sign-in `login ROUTE` stored
/// under (issuer, client, resource) — never the account's — refreshed with its own refresh token at its own
/// token endpoint, with the same `resource`. The redemption is a critical section per machine (the sign-in's
/// ``RedemptionLock``): under it the file is read again, a token another process obtained is taken over, and a
/// rotated refresh token is written before the lock is let go.
package struct DiscoveredRouteFlow: SignInFlow {
    package let route: String
    package let upstream: String
    package let store: DiscoveredSignInStore
    package let provider: IdentityProviderClient
    package let logger: Logger
    package let now: @Sendable () -> Date
    /// The token this flow last handed out: asked again while the file still holds it fresh, the cache has dropped
    /// it because the upstream refused it (`invalid_token`), and taking it over again would only be refused again.
    package let served = ServedToken()

    package final class ServedToken: Sendable {
        private let value = Mutex<String?>(nil)

        package func matches(_ token: String) -> Bool { value.withLock { $0 == token } }
        package func set(_ token: String) { value.withLock { $0 = token } }

        package init() {}
    }

    package var name: String { "discover" }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let key: DiscoveredSignInKey
        do {
            guard let found = try store.routeKey(upstream: upstream) else { throw notSignedIn("nobody has signed in") }
            key = found
        } catch let error as StateError {
            throw .misconfigured(reason: "\(error)")
        } catch {
            throw error as? TokenError ?? notSignedIn("nobody has signed in")
        }
        return try await store.redemptionLock(key).withLock { outcome async throws(TokenError) -> AccessToken in
            if outcome == .cancelled {
                throw .providerUnavailable(
                    reason: "cancelled while waiting for the redemption lock", retryAfterSeconds: 1)
            }
            if outcome != .held {
                logger.warning("redeeming \(route)'s refresh token without its redemption lock: \(outcome)")
            }
            return try await underLock(key, request: request)
        }
    }

    private func underLock(_ key: DiscoveredSignInKey, request: TokenRequest) async throws(TokenError) -> AccessToken {
        let stored: PersistedDiscoveredSignIn
        let client: DiscoveredClient
        do {
            guard let signIn = try store.signIn(key) else { throw notSignedIn("nobody has signed in") }
            stored = signIn
            // Another process may have refreshed meanwhile: its token is taken over, not asked for again.
            if let token = DiscoveredTokenRequest.accessToken(stored, scopes: request.scopes),
                token.isUsable(at: now()), token.refreshOn > now(), !served.matches(token.value)
            {
                served.set(token.value)
                return token
            }
            if stored.clientKind == DiscoveredClient.Kind.dynamic.rawValue {
                guard let registration = try store.registration(issuer: key.issuer),
                    registration.clientID == key.clientID
                else { throw notSignedIn("its client registration is gone") }
                client = DiscoveredClient(id: key.clientID, secret: registration.clientSecret, kind: .dynamic)
            } else {
                client = DiscoveredClient(id: key.clientID, secret: nil, kind: .configured)
            }
        } catch let error as StateError {
            throw .misconfigured(reason: "\(error)")
        } catch {
            throw error as? TokenError ?? notSignedIn("nobody has signed in")
        }
        guard let refreshToken = stored.refreshToken else { throw notSignedIn("its sign-in has expired") }
        let issued = now()
        let response: TokenResponse
        do {
            response = try await provider.requestToken(
                at: stored.tokenEndpoint,
                form: DiscoveredTokenRequest.refresh(refreshToken, resource: key.resource, client: client),
                basicCredentials: client.basicCredentials)
        } catch .rejected(let failure) where failure.error == "invalid_grant" {
            forget(key, registration: false)
            throw notSignedIn("its refresh token was refused (\(failure.reason))")
        } catch .rejected(let failure) where failure.error == "invalid_client" {
            // A stale registration: dropped, so that the next `login` registers again (#25 item 3).
            forget(key, registration: client.kind == .dynamic)
            throw notSignedIn("the authorization server no longer knows its client (invalid_client)")
        } catch {
            throw error.tokenError
        }
        var updated = stored
        DiscoveredTokenRequest.record(response, into: &updated, at: issued)
        do {
            try store.updateSignIn(key) { $0 = updated }
        } catch {
            logger.error("\(route): the refreshed sign-in could not be stored: \(error)")
        }
        guard let token = DiscoveredTokenRequest.accessToken(updated, scopes: request.scopes) else {
            throw .providerUnavailable(reason: "the token response had no access token", retryAfterSeconds: 5)
        }
        served.set(token.value)
        return token
    }

    /// Drops the tokens (and the registration) that the authorization server refused.
    private func forget(_ key: DiscoveredSignInKey, registration: Bool) {
        do {
            try store.updateSignIn(key) { stored in
                stored?.refreshToken = nil
                stored?.accessToken = nil
            }
            if registration { try store.dropRegistration(issuer: key.issuer) }
        } catch {
            logger.error("\(route): the refused sign-in could not be forgotten: \(error)")
        }
    }

    private func notSignedIn(_ why: String) -> TokenError {
        .signInRequired(reason: "\(route): \(why). Run: bearer-proxy login \(route)")
    }

    package init(
        route: String, upstream: String, store: DiscoveredSignInStore, provider: IdentityProviderClient, logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        self.route = route
        self.upstream = upstream
        self.store = store
        self.provider = provider
        self.logger = logger
        self.now = now
    }
}
