import Logging
import NIOCore
import NIOPosix

/// The composition root: the one place that picks concrete implementations and wires a configuration into a
/// listening proxy. `bearer-proxy serve` and the end-to-end tests both start the proxy through it, so the tests
/// exercise exactly what users run.
public struct RunningProxy: Sendable {
    public let server: ProxyServer
    public let tokens: TokenCache
    /// The embedded issuer, for the `dev` account.
    public let devIssuer: DevIssuer?
    public let group: MultiThreadedEventLoopGroup

    /// Binds `listen` (or the configuration's address) and starts serving `configuration`.
    ///
    /// - Parameters:
    ///   - stateDirectory: where the dev issuer's key lives; nil keeps everything in memory (`--no-persist`).
    ///   - threads: event loops; defaults to one per core.
    public static func start(
        configuration: Configuration, listen: ListenAddress? = nil, stateDirectory: StateDirectory?,
        environment: [String: String] = [:], timeouts: ProxyTimeouts = ProxyTimeouts(),
        threads: Int = System.coreCount, logger: Logger
    ) async throws -> RunningProxy {
        guard configuration.account.flow == .dev else {
            throw StartupError.flowNotAvailable(configuration.account.flow)
        }
        let address = listen ?? configuration.listen
        let policy = try SafetyPolicy.make(for: configuration, listen: address, environment: environment)
        if !address.isLoopback {
            logger.warning(
                "listening on non-loopback address \(address): \(policy.clientKey == nil ? "allowRemote is set and no client key is required — anyone who can reach it acts as this account" : "every request must carry the client key")"
            )
        }
        let key = try DevIssuer.signingKey(in: stateDirectory)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let server: ProxyServer
        do {
            server = try await ProxyServer.bind(to: address, group: group, timeouts: timeouts, logger: logger)
        } catch {
            try? await group.shutdownGracefully()
            throw StartupError.cannotListen(address: address.description, reason: "\(error)")
        }
        let bound = server.localAddress
        let issuerHost = ["0.0.0.0", "::"].contains(bound.host) ? "127.0.0.1" : bound.host
        let issuer = DevIssuer(issuer: DevIssuer.issuerURL(host: issuerHost, port: bound.port), key: key)
        let tokens = TokenCache(flow: issuer)
        try server.install(configuration, tokens: tokens, admin: AdminEndpoints(devIssuer: issuer), policy: policy)
        return RunningProxy(server: server, tokens: tokens, devIssuer: issuer, group: group)
    }

    /// Stops accepting, drains in-flight exchanges (bounded) and releases the event loops.
    public func shutdown() async throws {
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}

/// Why the proxy could not start; each names what to change.
public enum StartupError: Error, Sendable, CustomStringConvertible {
    case flowNotAvailable(AccountFlow)
    case cannotListen(address: String, reason: String)
    case remoteWithoutKey(address: String)

    public var description: String {
        switch self {
        case .flowNotAvailable(let flow):
            "account.flow: \"\(flow.rawValue)\" is recognised and validated but cannot sign in yet in this version; "
                + "only \"dev\" runs today (see docs/configuration.md)"
        case .cannotListen(let address, let reason): "cannot listen on \(address): \(reason)"
        case .remoteWithoutKey(let address):
            "listen: \(address) is not a loopback address, so anyone who can reach it could use this account; set "
                + "BEARER_PROXY_KEY (clients then send it) or, behind a NetworkPolicy, \"allowRemote\": true"
        }
    }
}
