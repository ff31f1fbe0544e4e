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

/// `bearer-proxy check`: validate the configuration and print every problem at once (SPEC §5).
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate routes.json and list every problem with its JSON path; exit 2 if there is any.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let configuration = try global.loadConfiguration()
        let routes = configuration.routes.routes
        print(
            "\(global.configPath): OK — listen \(configuration.listeners.map(\.description).joined(separator: ", ")), account flow \"\(configuration.account.flow.rawValue)\", \(routes.count) route\(routes.count == 1 ? "" : "s")"
        )
        for route in routes {
            print("  " + RouteSummary.line(for: route))
        }
    }
}

/// One line per route for `check` and `serve` start-up: where it goes and with which token (never the token).
enum RouteSummary {
    static func line(for route: Route) -> String {
        let auth: String
        switch route.auth {
        case .none: auth = "no token"
        case .bearer(let scopes): auth = scopes.scopes.isEmpty ? "bearer token" : "scopes \(scopes)"
        case .firebaseID: auth = "Firebase ID token"
        case .providerAccess(let scopes): auth = "provider access token \(scopes)"
        case .discover: auth = "discovered authorization server"
        case .onBehalfOf(let settings):
            auth =
                "on behalf of the caller, \(settings.grant.rawValue)"
                + (settings.scopes.scopes.isEmpty ? "" : " \(settings.scopes)")
        }
        var line = "\(route.prefix) → \(route.upstream.url) (\(auth)"
        if let methods = route.methods { line += "; methods \(methods.sorted().joined(separator: ","))" }
        if route.upstreamProtocol != .http1 { line += "; upstream \(route.upstreamProtocol.rawValue)" }
        return line + ")"
    }
}
