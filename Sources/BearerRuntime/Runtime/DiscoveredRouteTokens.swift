import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The token caches of the discovered routes (#25), one per route, each over its own ``DiscoveredRouteFlow``:
/// apart from the account's cache, so a discovered route never receives the account's token and the account's
/// refresh token never reaches another authorization server. Made only with a state directory (the sign-in
/// `login ROUTE` stores is read from it); kept across reloads, a route's cache made when a generation first
/// needs it.
package final class DiscoveredRouteTokens: Sendable {
    package let store: DiscoveredSignInStore
    private let eventLoopGroup: any EventLoopGroup
    private let caFile: String?
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let uptime: (@Sendable () -> Duration)?
    /// The caches by route, and the one HTTP client of their token requests — made with the first discovered route,
    /// so a configuration without one opens nothing.
    private let state = Mutex<(caches: [String: TokenCache], provider: IdentityProviderClient?)>(([:], nil))

    package init(
        store: DiscoveredSignInStore, eventLoopGroup: any EventLoopGroup, caFile: String?, logger: Logger,
        now: @escaping @Sendable () -> Date, uptime: (@Sendable () -> Duration)?
    ) {
        self.store = store
        self.eventLoopGroup = eventLoopGroup
        self.caFile = caFile
        self.logger = logger
        self.now = now
        self.uptime = uptime
    }

    /// The cache of each discovered route of `configuration`, by prefix.
    package func caches(for configuration: Configuration) -> [String: TokenCache] {
        var result: [String: TokenCache] = [:]
        for route in configuration.routes.routes {
            guard case .discover = route.auth else { continue }
            result[route.prefix] = cache(prefix: route.prefix, upstream: route.upstream.url)
        }
        return result
    }

    /// The HTTP client of the discovered routes' token requests, made once.
    package func provider() -> IdentityProviderClient {
        state.withLock { state in
            let provider =
                state.provider ?? IdentityProviderClient(eventLoopGroup: eventLoopGroup, logger: logger, caFile: caFile)
            state.provider = provider
            return provider
        }
    }

    private func cache(prefix: String, upstream: String) -> TokenCache {
        let provider = provider()
        return state.withLock { state in
            let name = prefix + " " + upstream
            if let known = state.caches[name] { return known }
            let flow = DiscoveredRouteFlow(
                route: prefix, upstream: upstream, store: store, provider: provider, logger: logger, now: now)
            // "Nothing stored" is read from the state directory, not asked of anyone: not throttled, so a
            // `login ROUTE` made while this proxy runs is used by the next request.
            let made = TokenCache(flow: flow, now: now, uptime: uptime, throttlesSignInRequired: false)
            state.caches[name] = made
            return made
        }
    }

    /// Closes the HTTP client, if one was made; once.
    package func shutdown() async {
        let provider = state.withLock { state in
            defer { state.provider = nil }
            return state.provider
        }
        try? await provider?.shutdown()
    }
}
