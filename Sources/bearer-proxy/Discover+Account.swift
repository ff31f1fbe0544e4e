import ArgumentParser
import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `bearer-proxy discover ROUTE` for a route whose authorization server is the account's own (SPEC §6.3): what a
/// running proxy checks and asks for — the protected-resource metadata, whether it names the account's issuer, the
/// scopes and whether `resource` is sent. No authorization-server metadata is fetched (nothing would sign in).
extension Discover {
    func discoverForAccount(_ route: Route, settings: DiscoverySettings, issuers: [String]) async throws {
        let prefix = route.prefix
        let logger = Logger(label: "bearer-proxy.discover")
        let target: AccountRouteFlow.Target
        let finding: ProtectedResourceFinding
        do {
            finding = try await ResourceDiscovery.once(for: route, settings: settings, logger: logger) {
                (discovery) async throws(DiscoveryError) -> ProtectedResourceFinding in
                try await discovery.protectedResource()
            }
            target = try AccountRouteFlow.target(of: finding, route: prefix, accountIssuers: issuers)
        } catch {
            let explanation =
                switch error {
                case let error as DiscoveryError: error.explanation
                case TokenError.misconfigured(let reason): reason
                default: "\(error)"
                }
            if json { print(try Self.encoded(DiscoveryFailureReport(route: prefix, error: explanation))) }
            Terminal.error("error: \(prefix): \(explanation)")
            throw ExitCode(1)
        }
        let report = AccountRouteReport(
            route: prefix, upstream: route.upstream.url, resourceMetadata: finding.attempts, resource: target.resource,
            authorizationServer: target.issuer, scopes: target.scopes.scopes,
            resourceSent: target.resourceParameter != nil)
        print(json ? try Self.encoded(report) : report.text)
    }
}

/// What `discover` prints for a route of the account's own authorization server.
struct AccountRouteReport: Encodable {
    var route: String
    var upstream: String
    var resourceMetadata: [MetadataAttempt]
    var resource: String
    var authorizationServer: String
    var client = "account"
    var scopes: [String]
    var resourceSent: Bool

    var text: String {
        var lines = ["\(route) → \(upstream)", "  protected-resource metadata (RFC 9728):"]
        lines += resourceMetadata.map {
            "    \(DiscoveryReport.printable($0.url)) — \(DiscoveryReport.printable($0.outcome))"
        }
        lines += [
            "  resource: \(DiscoveryReport.printable(resource))",
            "  authorization server: \(DiscoveryReport.printable(authorizationServer)) — the account's own",
            "  client: the account's (its refresh token; nothing registers)",
            "  scopes: \(scopes.map(DiscoveryReport.printable).joined(separator: " "))",
            "  resource parameter: "
                + (resourceSent ? "sent (it is the scopes' resource)" : "not sent (not the scopes' resource)"),
            "  nothing was signed in",
        ]
        return lines.joined(separator: "\n")
    }
}
