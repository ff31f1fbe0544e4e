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

/// `bearer-proxy login ROUTE` for a discovered route (SPEC §6.3): discover its authorization server, pick the client,
/// sign in with the browser (or the pasted redirect) and store the outcome in the state directory — the account is not
/// touched.
struct LoginRoute {
    let global: GlobalOptions
    let noPersist: Bool
    let noBrowser: Bool
    /// `--scopes`: the scopes to sign in for instead of the discovered ones (a step-up).
    let scopes: [String]?

    func run(route: String) async throws {
        global.bootstrapLogging()
        let configuration = try global.loadConfiguration()
        let (match, settings) = try Routes.discovered(
            route, in: configuration, configPath: global.configPath,
            hint: "; run bearer-proxy login without a route to sign the account in")
        let prefix = match.prefix
        guard !settings.usesAccount else {
            // Nothing to sign in for: the account's sign-in serves the route.
            Terminal.error(
                "error: \(prefix) uses the account's sign-in (\"authorizationServer\": \"account\"); run bearer-proxy "
                    + "login without a route")
            throw ExitCode(2)
        }
        guard !noPersist else {
            Terminal.error("error: login \(prefix) stores its sign-in for serve; it cannot run with --no-persist")
            throw ExitCode(2)
        }
        let logger = Logger(label: "bearer-proxy.login")
        let stateDirectory = StateDirectory.standard(environment: global.environment)
        var found: DiscoveredAuthorization
        do {
            let (discovered, unavailable) = try await DiscoveredAuthorization.discoverOrStored(
                for: match, settings: settings, stateDirectory: stateDirectory, logger: logger)
            if let unavailable {
                Terminal.error(
                    "warning: \(prefix): \(unavailable.explanation) Signing in with the metadata stored with its last "
                        + "sign-in.")
            }
            found = discovered
        } catch {
            Terminal.error("error: \(prefix): \(error.explanation)")
            throw ExitCode(1)
        }
        if let scopes {
            // Asked for at the authorization request only: a refresh never widens what was granted.
            found.scopes = scopes
            found.scopeSource = .command
        }
        let console = TerminalConsole(environment: global.environment)
        let result: Result<DiscoveredSignIn.Outcome, any Error>
        do {
            result = .success(
                try await Interrupt.cancellingOnSignal { [noBrowser, global, found] in
                    try await DiscoveredSignIn.run(
                        route: match, settings: settings, found: found,
                        caFile: match.tls.caFile ?? configuration.tls.caFile,
                        stateDirectory: stateDirectory, console: console,
                        noBrowser: noBrowser, logger: logger, environment: global.environment)
                })
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let outcome):
            print(Self.text(route: prefix, outcome))
        case .failure(let failure as SignInFailure):
            Terminal.error(failure.kind == .cancelled ? failure.message : "error: \(failure.message)")
            throw ExitCode(failure.kind == .cancelled ? 130 : 1)
        case .failure(let error):
            Terminal.error("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// What was signed in, never a secret.
    static func text(route: String, _ outcome: DiscoveredSignIn.Outcome) -> String {
        let scopes = outcome.scopes.isEmpty ? "none" : outcome.scopes.joined(separator: " ")
        let expiry = outcome.expiresOn.map { "access token expires \($0.formatted(.iso8601))" } ?? "no access token"
        return [
            "Signed in for \(route) at \(outcome.issuer).",
            "  client: \(outcome.clientKind) (\(outcome.clientID))",
            "  resource: \(outcome.resource)",
            "  scopes: \(scopes)",
            "  \(expiry); "
                + (outcome.hasRefreshToken ? "refreshed when needed" : "no refresh token: sign in again then"),
        ].joined(separator: "\n")
    }
}
