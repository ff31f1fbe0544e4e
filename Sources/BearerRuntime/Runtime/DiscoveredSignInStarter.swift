import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `serve` opening a discovered route's browser sign-in itself, for a route that opts in (`"signIn": "auto"`, #25
/// item 2): a request that finds the route without a usable sign-in asks for one and is answered `401` at once,
/// saying so — never a hung request — while this service runs the sign-in as `login ROUTE` would (discovery, the
/// client, code + PKCE, stored for the next request).
///
/// Bounded three ways: one sign-in per route at a time here; one interactive sign-in per authorization server per
/// machine (``DiscoveredSignIn``'s lock: a second process waits for the first's instead of opening a tab); and after
/// a sign-in that was declined or not finished, none for the route for ``backOff`` (L3 of docs/discovery.md: no
/// storm of tabs). Made only where a browser can be opened.
public final class DiscoveredSignInStarter: Service, Sendable {
    /// How long a declined or unfinished sign-in keeps the route from opening another one.
    package static let backOff: TimeInterval = 300

    private let stateDirectory: StateDirectory
    private let console: any SignInConsole
    private let environment: [String: String]
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let timeout: Duration
    private let requests: AsyncStream<Route>
    private let requestsContinuation: AsyncStream<Route>.Continuation
    /// The routes (by prefix) signing in now, and those backing off, until when.
    private let state = Mutex<(running: Set<String>, declinedUntil: [String: Date])>(([], [:]))

    /// - Parameter console: opens the browser (and takes the sign-in's lines, for the log).
    package init(
        stateDirectory: StateDirectory, console: any SignInConsole, environment: [String: String], logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }, timeout: Duration = .seconds(300)
    ) {
        self.stateDirectory = stateDirectory
        self.console = console
        self.environment = environment
        self.logger = logger
        self.now = now
        self.timeout = timeout
        (requests, requestsContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Asks for a sign-in for `route`; what the `401` adds for the person at the machine.
    package func request(_ route: Route) -> String {
        let now = now()
        enum Decision {
            case start
            case running
            case backingOff(Date)
        }
        let decision = state.withLock { state -> Decision in
            if state.running.contains(route.prefix) { return .running }
            if let until = state.declinedUntil[route.prefix], until > now { return .backingOff(until) }
            state.running.insert(route.prefix)
            return .start
        }
        switch decision {
        case .start:
            requestsContinuation.yield(route)
            return "serve is opening the sign-in in the browser on this machine: finish it there, then try again"
        case .running:
            return "a sign-in is waiting in the browser on this machine: finish it there, then try again"
        case .backingOff(let until):
            let seconds = Int(until.timeIntervalSince(now).rounded(.up))
            return "the last sign-in was declined or not finished, so serve opens none for \(seconds) s; run: "
                + "bearer-proxy login \(route.prefix)"
        }
    }

    /// Runs the sign-ins asked for, until shutdown (which cancels one in progress).
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await route in self.requests {
                    group.addTask { await self.signIn(route) }
                }
            }
        }
    }

    private func signIn(_ route: Route) async {
        guard case .discover(let settings) = route.auth else { return }
        var succeeded = false
        do {
            logger.info("sign-in started by serve (\"signIn\": \"auto\")", metadata: ["route": "\(route.prefix)"])
            let found = try await DiscoveredAuthorization.discover(for: route, settings: settings, logger: logger)
            let outcome = try await DiscoveredSignIn.run(
                route: route, settings: settings, found: found, caFile: route.tls.caFile,
                stateDirectory: stateDirectory, console: console, noBrowser: false, logger: logger,
                environment: environment, timeout: timeout)
            succeeded = true
            logger.info(
                "sign-in finished", metadata: ["route": "\(route.prefix)", "issuer": "\(outcome.issuer)"])
        } catch let error as DiscoveryError {
            logger.error("sign-in not started: \(error.explanation)", metadata: ["route": "\(route.prefix)"])
        } catch let failure as SignInFailure {
            logger.warning("sign-in ended: \(failure.message)", metadata: ["route": "\(route.prefix)"])
        } catch {
            logger.error("sign-in ended: \(error)", metadata: ["route": "\(route.prefix)"])
        }
        let declinedUntil = now().addingTimeInterval(Self.backOff)
        state.withLock { state in
            state.running.remove(route.prefix)
            state.declinedUntil[route.prefix] = succeeded ? nil : declinedUntil
        }
    }
}
