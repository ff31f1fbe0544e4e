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

/// What `login`, `logout`, `status` and `token` share: the configuration, the account runtime built from it (no
/// listener), and the mapping of token failures to one line and exit 1.
struct AccountOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions

    @Flag(name: .long, help: "Keep tokens in memory only; read and write nothing in the state directory.")
    var noPersist = false

    /// Runs `body` with the account of the configuration, then writes pending changes and releases resources.
    func withAccount<T>(_ body: (AccountRuntime) async throws -> T) async throws -> T {
        global.bootstrapLogging()
        let logger = Logger(label: "bearer-proxy")
        let configuration = try global.loadConfiguration()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let account: AccountRuntime
        do {
            account = try AccountRuntime.make(
                configuration: configuration,
                stateDirectory: noPersist ? nil : StateDirectory.standard(environment: global.environment),
                environment: global.environment, eventLoopGroup: group,
                devIssuerURL: DevIssuer.issuerURL(listeningOn: configuration.listeners),
                logger: logger)
        } catch {
            try? await group.shutdownGracefully()
            Terminal.error("error: \(error)")
            throw ExitCode(1)
        }
        for notice in account.notices { Terminal.error("warning: \(notice)") }
        do {
            let result = try await body(account)
            await account.shutdown()
            try? await group.shutdownGracefully()
            return result
        } catch {
            await account.shutdown()
            try? await group.shutdownGracefully()
            if let exit = error as? ExitCode { throw exit }
            if let failure = error as? SignInFailure {
                Terminal.error(failure.kind == .cancelled ? failure.message : "error: \(failure.message)")
                throw ExitCode(failure.kind == .cancelled ? 130 : 1)
            }
            Terminal.error("error: \(error)")
            if case TokenError.signInRequired = error { Terminal.error("run: bearer-proxy login") }
            throw ExitCode(1)
        }
    }
}

/// `bearer-proxy login`: sign the account in and store it; prints who is signed in (SPEC §5). With a discovered
/// route's prefix, signs in for that route at its own authorization server instead (SPEC §6.3; ``LoginRoute``).
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Sign the account in, get a token for every route's scope set, and store them; or, with ROUTE, sign in for a discovered route."
    )

    @OptionGroup var options: AccountOptions

    @Argument(help: "A discovered route's prefix (\"mcp\" or \"/mcp\"): sign in at its own authorization server.")
    var route: String?

    @Flag(
        name: .long,
        help: "With ROUTE: print the sign-in URL and read the address the browser was sent to, instead of waiting.")
    var noBrowser = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With ROUTE: sign in for these scopes (space-separated) instead of the ones discovery finds — what a 403 "
                + "insufficient_scope's answer names.",
            valueName: "scopes"))
    var scopes: String?

    @Flag(
        name: .long,
        help:
            "Firebase: when the email already has an account with another sign-in method, sign in to it and link Microsoft."
    )
    var link = false

    func run() async throws {
        if let route {
            return try await LoginRoute(
                global: options.global, noPersist: options.noPersist, noBrowser: noBrowser,
                scopes: scopes.map { $0.split(separator: " ").map(String.init) }
            ).run(route: route)
        }
        if scopes != nil {
            Terminal.error(
                "error: --scopes is for login ROUTE (a discovered route); the account's scopes come from routes.json")
            throw ExitCode(2)
        }
        try await options.withAccount { [link] account in
            // The new account reaches the file with its tokens: a running `serve` never sees it without them.
            let notes = try await account.inOneWrite {
                if account.interactive != nil {
                    let console = TerminalConsole(environment: options.global.environment)
                    let choices = SignInOptions(link: link)
                    _ = try await Interrupt.cancellingOnSignal {
                        try await account.signIn(console: console, options: choices)
                    }
                }
                return try await account.fetchRouteTokens()
            }
            // A sign-in that did not reach the file is gone when this command exits: that is a failure.
            try account.requireSaved()
            let report = StatusReport(account: account)
            print("Signed in (\(account.configuration.account.flow.rawValue)).")
            for note in notes { print("Note: \(note)") }
            print(report.text)
        }
    }
}

/// `bearer-proxy logout`: forget the account and every cached token for this configuration (SPEC §5).
struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Forget the account and every cached token for this configuration; revoke the refresh token where the provider allows."
    )

    @OptionGroup var options: AccountOptions

    @Argument(help: "A discovered route's prefix: forget only its sign-in (the account is kept).")
    var route: String?

    @Flag(name: .long, help: "With ROUTE: also forget the client registered with its authorization server.")
    var forgetRegistration = false

    func validate() throws {
        if forgetRegistration && route == nil { throw ValidationError("--forget-registration needs a ROUTE") }
    }

    func run() async throws {
        try await options.withAccount { [route, forgetRegistration] account in
            if let route {
                let (match, _) = try Routes.discovered(
                    route, in: account.configuration, configPath: options.global.configPath)
                guard
                    let (issuer, revocation) = try await account.forgetDiscovered(
                        match, registration: forgetRegistration)
                else {
                    print("\(match.prefix): nothing was signed in.")
                    return
                }
                print(
                    "Signed out of \(match.prefix) (\(issuer)): \(revocation)"
                        + (forgetRegistration ? "; its client registration is forgotten too." : "."))
                return
            }
            let notes = await account.signOut()
            try account.requireSaved()
            let file = account.persistence.map { " (\($0.store.path) removed)" } ?? ""
            print("Signed out: the account and its cached tokens are forgotten\(file).")
            for note in notes { print(note) }
        }
    }
}

/// `bearer-proxy status`: the account and, per route, its scope set and cached token's expiry — never a secret.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the account and, per route, the scope set and whether a token is cached (no secrets).")

    @OptionGroup var options: AccountOptions

    @Flag(name: .long, help: "Print JSON for scripts.")
    var json = false

    func run() async throws {
        try await options.withAccount { account in
            let configuration = account.configuration
            let report = StatusReport(
                account: account,
                access: AccessSummary(
                    configuration: configuration, listeners: configuration.listeners,
                    peerUserCheck: PeerUserPolicy.isAvailable))
            if json {
                print(String(decoding: report.json, as: UTF8.self))
            } else {
                print(report.text)
            }
        }
    }
}

/// `bearer-proxy token ROUTE`: print an access token for a route's scopes, and nothing else on stdout.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print an access token for a route's scope set (or --scopes) to stdout, and nothing else.")

    @OptionGroup var options: AccountOptions

    @Argument(help: "A route's prefix, with or without its leading slash (\"todo\" or \"/todo\").")
    var route: String?

    @Option(name: .long, help: "A space-separated scope set instead of a route's.")
    var scopes: String?

    @Option(
        name: .customLong("dpop-proof"), parsing: .upToNextOption,
        help: ArgumentHelp(
            "For a DPoP-bound token (RFC 9449): also print, on a second line, a proof for one request.",
            valueName: "METHOD URL"))
    var dpopProof: [String] = []

    func validate() throws {
        guard (route == nil) != (scopes == nil) else {
            throw ValidationError("give a ROUTE or --scopes \"a b\", not both and not neither")
        }
        guard dpopProof.isEmpty || dpopProof.count == 2 else {
            throw ValidationError("--dpop-proof takes a METHOD and a URL: --dpop-proof GET https://api.example.com/x")
        }
    }

    func run() async throws {
        let token = try await options.withAccount { account -> String in
            let wanted: ScopeSet
            if let scopes {
                wanted = ScopeSet(scopes.split(separator: " ").map(String.init))
            } else {
                let match = try Routes.named(
                    route!, in: account.configuration, configPath: options.global.configPath)
                let prefix = match.prefix
                if case .discover = match.auth {
                    guard let tokens = account.discoveredTokens(for: match) else {
                        Terminal.error("error: route \(prefix) has no stored sign-in without the state directory")
                        throw ExitCode(2)
                    }
                    let token: AccessToken
                    do throws(TokenError) {
                        token = try await tokens.accessToken(for: RouteAuth.discoveredTokenKey, presentedAs: .auto)
                    } catch {
                        guard case .signInRequired(let reason) = error else { throw error }
                        Terminal.error("error: \(reason)")
                        throw ExitCode(1)
                    }
                    // A token bound to the route's own sign-in's key (RFC 9449), proved with that key.
                    return try boundOutput(token) { () throws(TokenError) in tokens.proofKey(for: token) }
                }
                if case .onBehalfOf = match.auth {
                    Terminal.error(
                        "error: route \(prefix) sends each caller's own exchanged token (\"auth\": \"on-behalf-of\"), "
                            + "never one of this account's")
                    throw ExitCode(2)
                }
                guard let routeScopes = match.auth.tokenKey else {
                    Terminal.error("error: route \(prefix) sends no bearer token from this account")
                    throw ExitCode(2)
                }
                wanted = routeScopes
            }
            let token = try await account.tokens.accessToken(for: wanted, presentedAs: .auto)
            // A refresh token rotated for this token and not saved leaves the file with a retired one: say so now,
            // not at the next command's "signed out".
            try account.requireSaved()
            return try boundOutput(token) { () throws(TokenError) in try account.dpop?.key() }
        }
        print(token)
    }
}

extension Token {
    /// What to print for `token`: a bearer token alone; a DPoP-bound one (RFC 9449) only with `--dpop-proof`, and
    /// then with a proof for that one request on the second line — alone it would be refused by every API, and a
    /// script that sent it as a bearer token would only learn that from a 401.
    /// - Parameter key: the key `token` is bound to, asked only for a proof (nil: none is kept).
    func boundOutput(_ token: AccessToken, key: () throws(TokenError) -> DPoPKey?) throws -> String {
        guard token.boundKey != nil else { return token.value }
        var proofKey: DPoPKey?
        if dpopProof.count == 2 {
            do {
                proofKey = try key()
            } catch {
                Terminal.error("error: \(error.reason)")
                throw ExitCode(1)
            }
        }
        guard let proofKey else {
            Terminal.error(
                "error: this token is DPoP-bound (RFC 9449): it cannot be used alone as a bearer token. Run with "
                    + "--dpop-proof METHOD URL to print it with a proof for one request, and send both as "
                    + "\"Authorization: DPoP <token>\" and \"DPoP: <proof>\".")
            throw ExitCode(1)
        }
        let proof = proofKey.proof(
            method: dpopProof[0].uppercased(), url: dpopProof[1], at: Date(), accessToken: token.value)
        return token.value + "\n" + proof
    }
}

/// A route named on the command line.
enum Routes {
    /// The route with `prefix` (leading `/` optional), or exit 2 with one line listing the routes there are.
    static func named(_ prefix: String, in configuration: Configuration, configPath: String) throws -> Route {
        let prefix = prefix.hasPrefix("/") ? prefix : "/" + prefix
        guard let match = configuration.routes.routes.first(where: { $0.prefix == prefix }) else {
            let known = configuration.routes.routes.map(\.prefix).joined(separator: ", ")
            Terminal.error("error: no route \(prefix) in \(configPath) (routes: \(known))")
            throw ExitCode(2)
        }
        return match
    }

    /// The discovered route with `prefix` and its settings, or exit 2 with one line (`hint` appended to it when
    /// the route is of another kind).
    static func discovered(
        _ prefix: String, in configuration: Configuration, configPath: String, hint: String = ""
    ) throws -> (route: Route, settings: DiscoverySettings) {
        let match = try named(prefix, in: configuration, configPath: configPath)
        guard case .discover(let settings) = match.auth else {
            Terminal.error("error: route \(match.prefix) is not a discovered route (\"auth\": \"discover\")" + hint)
            throw ExitCode(2)
        }
        return (match, settings)
    }
}
