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
/// client, code + PKCE, stored for the next request). A route with `"stepUp": "auto"` also has its step-ups opened
/// here (#25 item 5, ``stepUp(_:_:)``).
///
/// Bounded three ways: one sign-in per route at a time here; one interactive sign-in per authorization server per
/// machine (``DiscoveredSignIn``'s lock: a second process waits for the first's instead of opening a tab); and after
/// a sign-in that was declined or not finished, none for the route for ``backOff`` (L3 of docs/discovery.md: no
/// storm of tabs). Made only where a browser can be opened.
public final class DiscoveredSignInStarter: Service, Sendable {
    /// How long a declined or unfinished sign-in keeps the route from opening another one; and how long a step-up
    /// keeps its route and path from opening another, whatever became of it.
    package static let backOff: TimeInterval = 300

    private let stateDirectory: StateDirectory
    private let console: any SignInConsole
    private let environment: [String: String]
    private let logger: Logger
    let now: @Sendable () -> Date
    private let timeout: Duration
    private let requests: AsyncStream<Job>
    let requestsContinuation: AsyncStream<Job>.Continuation
    /// What is running, backing off and waiting (``DiscoveredSignInStarter+StepUp.swift`` uses it too).
    let state = Mutex(Bookkeeping())

    /// A sign-in to run: the route's first, or a step-up for wider scopes.
    struct Job: Sendable {
        var route: Route
        var stepUp: StepUpRequest?
    }

    struct Bookkeeping: Sendable {
        /// The routes (by prefix) signing in now.
        var running: Set<String> = []
        /// The routes backing off after a declined or unfinished sign-in, until when.
        var declinedUntil: [String: Date] = [:]
        /// When each route (by prefix) and path may open a step-up again.
        var stepUpAgain: [StepUpPlace: Date] = [:]
        /// Who waits for each route's step-up sign-in, told nil once it is stored, else why not.
        var waiting: [String: [CheckedContinuation<String?, Never>]] = [:]
        /// The proxy is shutting down: nobody waits for a sign-in any more.
        var stopped = false
    }

    /// Where a step-up was asked for: the bound of ``stepUp(_:_:)``.
    struct StepUpPlace: Hashable, Sendable {
        var route: String
        var path: String
    }

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
            requestsContinuation.yield(Job(route: route))
            return "serve is opening the sign-in in the browser on this machine: finish it there, then try again"
        case .running:
            return "a sign-in is waiting in the browser on this machine: finish it there, then try again"
        case .backingOff(let until):
            return Self.backingOff(until, now: now) + "; run: bearer-proxy login \(route.prefix)"
        }
    }

    /// Why no sign-in opens until `until`.
    static func backingOff(_ until: Date, now: Date) -> String {
        let seconds = Int(until.timeIntervalSince(now).rounded(.up))
        return "the last sign-in was declined or not finished, so serve opens none for \(seconds) s"
    }

    /// Runs the sign-ins asked for, until shutdown (which cancels one in progress).
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await job in self.requests {
                    group.addTask { await self.signIn(job) }
                }
            }
        }
        // A step-up asked for but never started waits no longer.
        stopWaiting()
    }

    private func signIn(_ job: Job) async {
        let route = job.route
        guard case .discover(let settings) = route.auth else { return }
        var succeeded = false
        do {
            if let stepUp = job.stepUp {
                logger.info(
                    "step-up sign-in started by serve (\"stepUp\": \"auto\")",
                    metadata: ["route": "\(route.prefix)", "scopes": "\(stepUp.scopes.joined(separator: " "))"])
            } else {
                logger.info("sign-in started by serve (\"signIn\": \"auto\")", metadata: ["route": "\(route.prefix)"])
            }
            var found = try await DiscoveredAuthorization.discover(for: route, settings: settings, logger: logger)
            if let stepUp = job.stepUp {
                // Asked for at the authorization request only: a refresh never widens what was granted.
                found.scopes = stepUp.scopes
                found.scopeSource = .command
            }
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
        let waiting = state.withLock { state in
            state.running.remove(route.prefix)
            state.declinedUntil[route.prefix] = succeeded ? nil : declinedUntil
            return state.waiting.removeValue(forKey: route.prefix) ?? []
        }
        let refusal = succeeded ? nil : "the sign-in serve opened for them was declined or not finished"
        for waiter in waiting { waiter.resume(returning: refusal) }
    }
}
