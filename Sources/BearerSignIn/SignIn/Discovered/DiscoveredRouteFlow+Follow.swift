import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging

/// A running `serve` keeps a discovered route's token in memory; the state directory is where every process reads
/// and writes the route's sign-in. What memory may send follows the directory: a token the directory no longer holds
/// for the route — `logout ROUTE` deleted it, `login ROUTE` replaced the sign-in, another process refreshed it, a
/// refusal was noted there — is not sent again.
extension DiscoveredRouteFlow {
    /// Brings `cache` (this flow's route's token cache) in line with the state directory: when it holds a token that
    /// the route's stored sign-in does not, its tokens are replaced by the stored one (none when there is none, or
    /// when the upstream refused it here). Reads local files only, so a running `serve` can call it once a second
    /// whatever its token requests are doing. A change the cache made after the files were read (a token just
    /// fetched, written before it was cached) is newer than what was read and is left alone.
    package func follow(_ cache: TokenCache) {
        let count = cache.changeCount
        let held = cache.allTokens
        guard let scopes = held.first?.scopes else { return }
        let stored: AccessToken?
        do {
            stored = try storedToken(scopes: scopes)
        } catch {
            // A directory that cannot be read says nothing of the sign-in (as for the account's file): what memory
            // holds stays, and the next round reads again.
            return
        }
        guard held.contains(where: { $0.value != stored?.value }) else { return }
        let replaced = cache.replaceTokens(
            with: stored.map { [$0] } ?? [], because: .changedElsewhere(sameCredential: false),
            unlessChangedSince: count)
        if replaced {
            // The flow hears which token is in use, so that a refusal of it is heard as one (``served``).
            if let stored { served.set(stored.value) }
            logger.info(
                "\(route): its sign-in changed in the state directory (a login, logout or refresh by another process); the token in memory is no longer sent"
            )
        }
    }

    /// The access token the state directory holds for this route, as the cache keeps it under `scopes`; nil when the
    /// route has no sign-in there, the sign-in has no access token, or the upstream refused that token here.
    package func storedToken(scopes: ScopeSet) throws(StateError) -> AccessToken? {
        guard let key = try store.routeKey(upstream: upstream), let signIn = try store.signIn(key),
            let token = DiscoveredTokenRequest.accessToken(signIn, scopes: scopes), !served.wasRejected(token.value)
        else { return nil }
        return token
    }
}
