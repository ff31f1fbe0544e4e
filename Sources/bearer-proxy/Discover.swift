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
import NIOPosix

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `bearer-proxy discover ROUTE`: the dry run of a discovered route (SPEC §6.3) — probe its upstream without a token,
/// follow its metadata, and print what a sign-in would use. Never signs in, never sends a credential.
struct Discover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Probe a discovered route's upstream and show its authorization server, without signing in.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A discovered route's prefix, with or without its leading slash (\"mcp\" or \"/mcp\").")
    var route: String

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    func run() async throws {
        global.bootstrapLogging()
        let configuration = try global.loadConfiguration()
        let (match, settings) = try Routes.discovered(route, in: configuration, configPath: global.configPath)
        if settings.usesAccount {
            let issuers = try await Self.accountIssuers(configuration, global: global)
            return try await discoverForAccount(match, settings: settings, issuers: issuers)
        }
        let prefix = match.prefix
        let logger = Logger(label: "bearer-proxy.discover")
        let found: DiscoveredAuthorization
        do {
            found = try await DiscoveredAuthorization.discover(for: match, settings: settings, logger: logger)
        } catch {
            if json { print(try Self.encoded(DiscoveryFailureReport(route: prefix, error: error.explanation))) }
            Terminal.error("error: \(prefix): \(error.explanation)")
            throw ExitCode(1)
        }
        if json {
            print(try Self.encoded(DiscoveryReport(route: prefix, upstream: match.upstream.url, found: found)))
        } else {
            print(DiscoveryReport.text(route: prefix, upstream: match.upstream.url, found: found))
        }
        guard found.registration != .unavailable else {
            Terminal.error("error: \(prefix): no client identity: \(found.registration.explanation)")
            throw ExitCode(1)
        }
    }

    /// The account's issuers, with the directory id its stored sign-in tells (read from the token cache file).
    static func accountIssuers(_ configuration: Configuration, global: GlobalOptions) async throws -> [String] {
        guard let client = configuration.account.settings.oauthClient else { return [] }
        let account = try AccountRuntime.make(
            configuration: configuration, stateDirectory: StateDirectory.standard(environment: global.environment),
            environment: global.environment, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            devIssuerURL: DevIssuer.issuerURL(listeningOn: configuration.listeners),
            logger: Logger(label: "bearer-proxy.discover"))
        let tenantID = account.identity?.tenantID
        await account.shutdown()
        return client.endpoint.issuers(tenantID: tenantID)
    }

    static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// What `discover --json` prints when discovery fails.
struct DiscoveryFailureReport: Encodable {
    var route: String
    var error: String
}

/// What `discover` prints: every URL tried and what a sign-in would use (no secret exists yet to leak).
struct DiscoveryReport: Encodable {
    struct Client: Encodable {
        var kind: String
        var detail: String
    }

    var route: String
    var upstream: String
    var probeStatus: Int
    var metadataFromChallenge: Bool
    var resourceMetadata: [MetadataAttempt]
    var resource: String
    var authorizationServer: String
    var authorizationServerMetadata: [MetadataAttempt]
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var registrationEndpoint: String?
    var revocationEndpoint: String?
    var pushedAuthorizationRequestEndpoint: String?
    var codeChallengeMethods: [String]
    var issParameterSupported: Bool
    var scopes: [String]
    var scopeSource: String
    var client: Client

    init(route: String, upstream: String, found: DiscoveredAuthorization) {
        self.route = route
        self.upstream = upstream
        probeStatus = found.probeStatus
        metadataFromChallenge = found.metadataFromChallenge
        resourceMetadata = found.resourceMetadataAttempts
        resource = found.resource
        authorizationServer = found.issuer
        authorizationServerMetadata = found.serverMetadataAttempts
        authorizationEndpoint = found.authorizationEndpoint
        tokenEndpoint = found.tokenEndpoint
        registrationEndpoint = found.registrationEndpoint
        revocationEndpoint = found.revocationEndpoint
        pushedAuthorizationRequestEndpoint = found.pushedAuthorizationRequestEndpoint
        codeChallengeMethods = found.codeChallengeMethods
        issParameterSupported = found.issParameterSupported
        scopes = found.scopes
        scopeSource = found.scopeSource.rawValue
        client = Client(kind: found.registration.kind, detail: found.registration.explanation)
    }

    static func text(route: String, upstream: String, found: DiscoveredAuthorization) -> String {
        func attempts(_ list: [MetadataAttempt]) -> [String] {
            list.map { "    \(printable($0.url)) — \(printable($0.outcome))" }
        }
        let scopes = found.scopes.isEmpty ? "none" : found.scopes.map(printable).joined(separator: " ")
        var lines = [
            "\(route) → \(upstream)",
            "  upstream answered \(found.probeStatus) without a token"
                + (found.metadataFromChallenge ? "; its challenge names resource_metadata" : ""),
            "  protected-resource metadata (RFC 9728):",
        ]
        lines += attempts(found.resourceMetadataAttempts)
        lines += [
            "  resource: \(printable(found.resource))",
            "  authorization server: \(printable(found.issuer))",
            "  authorization-server metadata:",
        ]
        lines += attempts(found.serverMetadataAttempts)
        lines += [
            "  authorization endpoint: \(printable(found.authorizationEndpoint))",
            "  token endpoint: \(printable(found.tokenEndpoint))",
            "  registration endpoint: \(found.registrationEndpoint.map(printable) ?? "none")",
            "  pushed authorization requests (RFC 9126): "
                + (found.pushedAuthorizationRequestEndpoint.map(printable) ?? "none"),
            "  PKCE: S256 (advertised: \(found.codeChallengeMethods.map(printable).joined(separator: ", ")))",
            "  iss in authorization responses (RFC 9207): \(found.issParameterSupported ? "yes" : "no")",
            "  client: \(printable(found.registration.explanation))",
            "  initial scopes: "
                + (found.scopeSource == .none ? "none" : "\(scopes) (from \(found.scopeSource.rawValue))"),
            "  nothing was signed in",
        ]
        return lines.joined(separator: "\n")
    }

    /// A value a server chose, shown on a terminal: printable ASCII only (the URLs were checked, but a query may
    /// still hold bytes a terminal acts on).
    static func printable(_ value: String) -> String {
        String(value.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
    }
}
