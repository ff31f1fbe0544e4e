import Foundation
import Logging

extension RunningProxy {
    /// What a reload did.
    public enum ReloadOutcome: Sendable, Equatable {
        /// The new configuration is in force for new requests; in-flight ones finish with the old one.
        case applied(accountChanged: Bool)
        /// The new file is invalid (every problem logged); the old configuration keeps serving.
        case rejected(problems: [String])
    }

    /// Re-reads `routes.json` (SIGHUP; SPEC §10). A valid file takes effect for new requests without touching
    /// in-flight ones; an invalid one is refused with every problem logged and the old one keeps serving. When the
    /// `account` section is unchanged the signed-in account and its cached tokens are kept.
    @discardableResult
    public func reload(from path: String) async -> ReloadOutcome {
        let state = current
        let logger = state.logger
        let configuration: Configuration
        do {
            configuration = try Configuration.load(path: path, environment: state.environment)
        } catch {
            let problems = error.problems.map(\.description)
            for problem in problems { logger.error("reload refused: \(path): \(problem)") }
            logger.error("reload refused: \(problems.count) problem(s); the previous configuration keeps serving")
            return .rejected(problems: problems)
        }
        let listen = server.localAddress
        let old = state.account
        if configuration.listen != old.configuration.listen {
            logger.warning("reload: \"listen\" changed to \(configuration.listen); it takes effect after a restart")
        }
        let accountChanged = configuration.account != old.configuration.account
        let account: AccountRuntime
        let policy: SafetyPolicy
        do {
            policy = try SafetyPolicy.make(for: configuration, listen: listen, environment: state.environment)
            if accountChanged {
                account = try AccountRuntime.make(
                    configuration: configuration, stateDirectory: state.stateDirectory,
                    environment: state.environment, eventLoopGroup: group,
                    devIssuerURL: DevIssuer.issuerURL(listeningOn: listen), logger: logger,
                    metrics: metrics, now: state.now)
            } else {
                account = old.with(configuration: configuration)
            }
            try server.install(
                configuration, tokens: account.tokens,
                admin: AdminEndpoints(account: account, metrics: metrics, server: server), policy: policy)
        } catch {
            logger.error("reload refused: \(error); the previous configuration keeps serving")
            return .rejected(problems: ["\(error)"])
        }
        _ = state.replace(with: account)
        if accountChanged { await old.shutdown() }
        for route in configuration.routes.routes {
            logger.info("route \(route.prefix) → \(route.upstream.url)")
        }
        let accountNote = accountChanged ? "new account (\(configuration.account.flow.rawValue))" : "same account"
        logger.info("reloaded \(path): \(configuration.routes.routes.count) routes, \(accountNote)")
        return .applied(accountChanged: accountChanged)
    }
}
