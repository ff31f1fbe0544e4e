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

/// Where a discovered route whose authorization server is the account's own (`"authorizationServer": "account"`,
/// SPEC §6.3) gets its tokens: from the account's sign-in — the account's client and refresh token, through the
/// account's token cache (one more scope set: single flight, the token cache file and the cross-process redemption
/// rules included) — once the upstream's protected-resource metadata (RFC 9728) names the account's issuer.
///
/// Microsoft Entra offers neither dynamic registration nor client metadata documents, and its refresh tokens are good
/// for any of its resources: nothing signs in here, so no authorization-server metadata is fetched (Entra's lacks the
/// PKCE methods a sign-in would check), nothing registers, and the account's refresh token goes to no token endpoint
/// but the account's own. What the route says explicitly, not a host name, decides all of this.
package final class AccountRouteFlow: SignInFlow {
    /// What the upstream's metadata asks the account for.
    package struct Target: Sendable, Equatable {
        /// The scopes of the token: the challenge's `scope`, else the metadata's `scopes_supported` (OpenID Connect
        /// scopes left out: the account's sign-in adds them), else `{resource}/.default`.
        package var scopes: ScopeSet
        /// The metadata's `resource`.
        package var resource: String
        /// Which of the account's issuers the metadata named.
        package var issuer: String

        /// The RFC 8707 `resource` to send: the metadata's, only when it is the scopes' own resource (everything
        /// before a scope's last `/`) — Entra refuses any other (AADSTS9010010) and older Entra any at all
        /// (AADSTS901002), while the scopes alone already name the audience.
        package var resourceParameter: String? { resource == scopes.resource ? resource : nil }
    }

    package let route: String
    /// The account's token cache.
    let accountTokens: TokenCache
    /// The issuers the account's authorization server answers to, asked each time (a sign-in tells the tenant).
    package let accountIssuers: @Sendable () -> [String]
    /// Steps 1 and 2 of discovery for the route.
    package let discover: @Sendable () async throws(DiscoveryError) -> ProtectedResourceFinding
    package let logger: Logger
    package let now: @Sendable () -> Date
    /// The token last handed out, and whether the upstream refused it.
    let served = DiscoveredRouteFlow.ServedToken()
    /// The last discovery that found the account's issuer, and when; kept until the upstream refuses a token, then
    /// asked again at most once per ``RouteRediscovery/interval``.
    private let known = Mutex<(at: Date, target: Target)?>(nil)

    package var name: String { "discover" }

    /// What the last discovery found, if one has run in this process.
    package var lastTarget: Target? { known.withLock { $0?.target } }

    package init(
        route: String, accountTokens: TokenCache, accountIssuers: @escaping @Sendable () -> [String],
        logger: Logger, now: @escaping @Sendable () -> Date,
        discover: @escaping @Sendable () async throws(DiscoveryError) -> ProtectedResourceFinding
    ) {
        self.route = route
        self.accountTokens = accountTokens
        self.accountIssuers = accountIssuers
        self.discover = discover
        self.logger = logger
        self.now = now
    }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let target = try await currentTarget()
        let token = try await accountTokens.accessToken(
            for: target.scopes, claims: request.claims, resource: target.resourceParameter)
        served.set(token.value)
        // Under the route's own key: the data plane asks the route's cache, never the account's, for this route.
        return AccessToken(
            value: token.value, scopes: request.scopes, grantedScopes: token.grantedScopes.sorted(),
            expiresOn: token.expiresOn, refreshOn: token.refreshOn, issuedAt: token.issuedAt)
    }

    /// The upstream refused `token`: the account's cache drops it too, so the next request gets a new one there.
    package func rejected(_ token: String) {
        served.reject(token)
        if let scopes = known.withLock({ $0?.target.scopes }) { accountTokens.invalidate(scopes, rejected: token) }
    }

    /// What the last discovery found, or a new discovery's: the first time, and after the upstream refused a token
    /// (bounded). A discovery that fails for now leaves the last one standing.
    func currentTarget() async throws(TokenError) -> Target {
        let now = now()
        let last = known.withLock { $0 }
        let refused = served.lastWasRejected
        if let last, !refused || now.timeIntervalSince(last.at) < RouteRediscovery.interval { return last.target }
        let finding: ProtectedResourceFinding
        do {
            finding = try await discover()
        } catch {
            if error.isTransient, let last { return last.target }
            throw error.isTransient
                ? .providerUnavailable(reason: error.explanation, retryAfterSeconds: 5)
                : .misconfigured(reason: "\(route): \(error.explanation) Run: bearer-proxy discover \(route)")
        }
        let target = try Self.target(of: finding, route: route, accountIssuers: accountIssuers())
        known.withLock { $0 = (now, target) }
        if last?.target != target {
            logger.info(
                "discovery succeeded: the account's own authorization server",
                metadata: [
                    "route": "\(route)", "issuer": "\(target.issuer)", "scopes": "\(target.scopes)",
                    "resource-sent": "\(target.resourceParameter != nil)",
                ])
        }
        return target
    }

    /// The scopes and resource `finding` asks the account for, when it names one of `accountIssuers`.
    package static func target(
        of finding: ProtectedResourceFinding, route: String, accountIssuers: [String]
    ) throws(TokenError) -> Target {
        // RFC 8414 §3.3's rule: issuers are compared byte for byte.
        guard let issuer = finding.authorizationServers.first(where: accountIssuers.contains) else {
            let named = finding.authorizationServers.map(DiscoveryError.shown).joined(separator: ", ")
            throw .misconfigured(
                reason: "\(route) says its authorization server is the account's (\"authorizationServer\": "
                    + "\"account\"), but its upstream's metadata names \(named), not the account's "
                    + "(\(accountIssuers.joined(separator: " or "))): the account's sign-in is not used there.")
        }
        let resource = finding.metadata.resource
        let asked = finding.scopes.filter { !ScopeSet.openIDConnectScopes.contains($0.lowercased()) }
        let scopes = ScopeSet(asked.isEmpty ? [resource + "/.default"] : asked)
        let unusable = scopes.scopes.filter { ScopeSet.problem(with: $0) != nil }
        guard unusable.isEmpty, scopes.resources.count == 1 else {
            throw .misconfigured(
                reason: "\(route): its upstream asks for scopes the account cannot get one token for "
                    + "(\(DiscoveryError.shown(scopes.description))): one resource per token.")
        }
        return Target(scopes: scopes, resource: resource, issuer: issuer)
    }
}
