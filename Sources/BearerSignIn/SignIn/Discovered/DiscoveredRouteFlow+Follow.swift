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
        retryUnsaved()
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

    /// The access token the state directory holds for this route, as the cache keeps it under `scopes` — or the one
    /// of a rotation this process holds unsaved, while the file still holds the refresh token it came from; nil when
    /// the route has no sign-in there, the sign-in has no access token, or the upstream refused that token here.
    func storedToken(scopes: ScopeSet) throws(StateError) -> AccessToken? {
        guard let key = try store.routeKey(upstream: upstream) else {
            unsaved.resolveAll()
            return nil
        }
        let file = try store.signIn(key)
        guard let signIn = unsaved.newer(than: file, key: key) ?? file,
            let token = DiscoveredTokenRequest.accessToken(signIn, scopes: scopes), !served.wasRejected(token.value)
        else { return nil }
        return token
    }

    /// Writes again the refreshed sign-in this process could not write, once its back-off has passed (or at once
    /// with `force`), over the refresh token it came from only: a `login` or `logout` since stands, and what was
    /// held is dropped. Returns whether nothing is left unsaved.
    @discardableResult
    func retryUnsaved(force: Bool = false) -> Bool {
        guard let held = unsaved.due(at: .now, force: force) else { return unsaved.current == nil }
        do {
            let written = try store.replaceSignIn(
                held.key, with: held.record, ifStillHolding: [held.fileHeld, held.record.refreshToken])
            unsaved.resolve(held.record)
            if written == .written {
                logger.notice("\(route): its refreshed sign-in is written to the state directory; nothing is unsaved")
            } else {
                logger.warning(
                    "\(route): a sign-in or sign-out stored by another process replaces the refreshed sign-in this process could not write"
                )
            }
        } catch {
            unsaved.failedAgain("\(error)", at: .now)
            logger.error("\(route): the refreshed sign-in still cannot be stored: \(error)")
        }
        return unsaved.current == nil
    }

    /// At shutdown: one last write of what is unsaved; when it fails too, the sign-in is lost with this process, and
    /// the log says so.
    package func finish() {
        guard !retryUnsaved(force: true), let held = unsaved.current else { return }
        logger.error(
            "\(route): its refreshed sign-in could not be saved to the state directory (\(held.lastError)); it is lost when this process ends, and the file keeps a refresh token the authorization server has retired: once the cause is fixed, run bearer-proxy login \(route)"
        )
    }
}
