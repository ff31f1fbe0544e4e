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
import NIOCore
import ServiceLifecycle
import UnixSignals

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `bearer-proxy serve`: validate the configuration, sign in, then proxy until SIGINT/SIGTERM (SPEC §5).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Proxy requests, adding each route's bearer token, until SIGINT or SIGTERM.")

    @OptionGroup var global: GlobalOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "HOST:PORT or unix:PATH to listen on (repeatable), instead of routes.json's \"listen\".",
            discussion: "unix: alone means $XDG_RUNTIME_DIR/bearer-proxy/proxy.sock."))
    var listen: [String] = []

    @Flag(name: .long, help: "Keep keys and tokens in memory only; write nothing to the state directory.")
    var noPersist = false

    @Option(name: .long, help: "Event loop threads (default: one per core).")
    var threads: Int?

    @Option(name: .long, help: "Seconds a client has to send a whole request head (default 10); then 408.")
    var requestHeadTimeout: Double = 10

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds a request body may stop flowing (default 60); then 408, or the connection closes. The same "
                + "limit for an upstream that takes none of it: then 504."))
    var bodyStallTimeout: Double = 60

    @Option(name: .long, help: "Seconds an idle client keep-alive connection stays open (default 60).")
    var idleTimeout: Double = 60

    @Option(
        name: .long,
        help: "Seconds in-flight requests may take to finish after SIGTERM or SIGINT (default 10); then it exits.")
    var shutdownGrace: Double = 10

    @Option(
        name: .long,
        help: "Client connections served at once; more wait to be accepted (default: half the descriptor limit)."
    )
    var maxConnections: Int?

    /// The data plane's limits with this command's options applied.
    var timeouts: ProxyTimeouts {
        var timeouts = ProxyTimeouts()
        timeouts.requestHead = Self.amount(requestHeadTimeout)
        timeouts.bodyStall = Self.amount(bodyStallTimeout)
        timeouts.clientIdle = Self.amount(idleTimeout)
        timeouts.shutdownGrace = Self.amount(shutdownGrace)
        return timeouts
    }

    private static func amount(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64((seconds * 1_000_000_000).rounded()))
    }

    func validate() throws {
        if let threads, !(1...256).contains(threads) {
            throw ValidationError("--threads: expected 1 to 256, got \(threads)")
        }
        for (option, value) in [
            ("--request-head-timeout", requestHeadTimeout), ("--body-stall-timeout", bodyStallTimeout),
            ("--idle-timeout", idleTimeout), ("--shutdown-grace", shutdownGrace),
        ] where !(value > 0 && value <= 86_400) {
            throw ValidationError("\(option): expected seconds greater than 0 and at most 86400, got \(value)")
        }
        if let maxConnections, !(1...10_000_000).contains(maxConnections) {
            throw ValidationError("--max-connections: expected 1 to 10000000, got \(maxConnections)")
        }
        _ = try listeners()
    }

    /// `--listen`, read as routes.json's `listen` is (relative socket paths against the working directory); nil
    /// when not given.
    func listeners() throws -> [Listener]? {
        guard !listen.isEmpty else { return nil }
        var listeners: [Listener] = []
        for text in listen {
            do {
                let listener = try Listener.parse(
                    text, runtimeDirectory: global.environment["XDG_RUNTIME_DIR"],
                    relativeTo: FileManager.default.currentDirectoryPath)
                if !listeners.contains(listener) { listeners.append(listener) }
            } catch {
                throw ValidationError("--listen \(text): \(error)")
            }
        }
        return listeners
    }

    func run() async throws {
        global.bootstrapLogging()
        let logger = Logger(label: "bearer-proxy")
        let configuration = try global.loadConfiguration()
        let state = noPersist ? nil : StateDirectory.standard(environment: global.environment)
        // Trapped before the port opens: the proxy answers as soon as it listens, and a SIGTERM that comes before the
        // service group has installed its own handlers must still end in a graceful shutdown (exit 0), not kill it.
        let earlySignals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let proxy: RunningProxy
        do {
            proxy = try await RunningProxy.start(
                configuration: configuration, listeners: try listeners(),
                stateDirectory: state, environment: global.environment, timeouts: timeouts,
                maximumConnections: maxConnections, threads: threads ?? System.coreCount,
                logger: logger, signInConsole: Self.signInConsole(for: configuration, global: global, logger: logger),
                beforeServing: { [global] account in
                    try await Self.signInIfNeeded(
                        account, environment: global.environment, configPath: global.configPath, logger: logger)
                })
        } catch let exit as ExitCode {
            throw exit
        } catch let error as StartupError {
            Terminal.error("error: \(error)")
            switch error {
            case .remoteWithoutKey: throw ExitCode(2)
            case .cannotListen: break
            }
            throw ExitCode(1)
        } catch {
            Terminal.error("error: \(error)")
            throw ExitCode(1)
        }
        for route in configuration.routes.routes {
            logger.info("route \(RouteSummary.line(for: route))")
        }
        for listener in proxy.server.listeners {
            let reach =
                switch listener {
                case .tcp(let address): "http://\(address)"
                case .unix(let path): "\(listener) (curl --unix-socket \(path.path) http://localhost/…)"
                }
            logger.info("listening on \(reach) (account: \(configuration.account.flow.rawValue))")
        }
        let services = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: proxy.server), .init(service: TokenMaintenance(proxy: proxy)),
                    .init(service: ConfigurationReloader(proxy: proxy, path: global.configPath)),
                ] + (proxy.signInStarter.map { [.init(service: $0)] } ?? []),
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                // A signal trapped early (or any later one: the group traps them too) asks for graceful shutdown.
                for await _ in earlySignals {
                    await services.triggerGracefulShutdown()
                    return
                }
            }
            try await services.run()
            group.cancelAll()
        }
        await proxy.shutdownAccounts()
        try await proxy.group.shutdownGracefully()
        logger.info("stopped")
    }

    /// The console of the sign-ins `serve` opens itself (`"signIn": "auto"`, SPEC §6.3): the terminal, when a route
    /// asks for them and a browser can be opened here; nil otherwise — those routes then answer as with `"login"`, and
    /// a warning says why.
    private static func signInConsole(
        for configuration: Configuration, global: GlobalOptions, logger: Logger
    ) -> (any SignInConsole)? {
        let prefixes = configuration.routes.routes.compactMap { route -> String? in
            guard case .discover(let settings) = route.auth, settings.startsSignIn else { return nil }
            return route.prefix
        }
        guard !prefixes.isEmpty else { return nil }
        guard BrowserCommand.find(environment: global.environment) != nil else {
            let routes = prefixes.joined(separator: ", ")
            logger.warning(
                "\"signIn\": \"auto\" on \(routes): no browser can be opened here, so only bearer-proxy login ROUTE signs in"
            )
            return nil
        }
        return TerminalConsole(environment: global.environment)
    }

    /// An interactive flow with no account: sign in first when someone is at a terminal (or nobody is needed:
    /// `native` with the password in the environment); otherwise serve anyway —
    /// every request is answered 401 "run: bearer-proxy login" until a `login` elsewhere writes the token cache
    /// file, which the running proxy picks up (SPEC §7).
    private static func signInIfNeeded(
        _ account: AccountRuntime, environment: [String: String], configPath: String, logger: Logger
    ) async throws {
        guard account.needsSignIn else { return }
        let console = TerminalConsole(environment: environment)
        guard console.canAsk || account.interactive?.needsPerson == false else {
            logger.warning(
                "not signed in: requests are answered 401 until someone runs `bearer-proxy login --config \(configPath)`; this proxy picks the sign-in up"
            )
            return
        }
        do {
            _ = try await Interrupt.cancellingOnSignal { try await account.signIn(console: console) }
        } catch let failure as SignInFailure {
            Terminal.error(failure.kind == .cancelled ? failure.message : "error: \(failure.message)")
            throw ExitCode(failure.kind == .cancelled ? 130 : 1)
        }
    }
}
