import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging

/// A route on the account's own authorization server keeps copies of the account's tokens in a cache of its own; the
/// copies follow the account's cache, as that follows the account's token cache file.
extension AccountRouteFlow {
    /// Brings `cache` (this flow's route's token cache, holding copies of the account's tokens) in line with the
    /// account's cache, which follows the account's token cache file: a copy of a token the account no longer holds
    /// — a `logout`, a new sign-in, a refresh — is not sent again; the next request takes the account's current one.
    package func follow(_ cache: TokenCache) {
        let count = cache.changeCount
        let held = cache.allTokens
        guard !held.isEmpty else { return }
        let current = Set(accountTokens.allTokens.map(\.value))
        guard held.contains(where: { !current.contains($0.value) }) else { return }
        if cache.replaceTokens(with: [], because: .changedElsewhere(sameCredential: false), unlessChangedSince: count) {
            logger.info("\(route): the account's token it held is no longer the account's; it is no longer sent")
        }
    }
}
