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

/// `serve` opening a discovered route's browser sign-in itself, for a route that opts in (`"signIn": "auto"`,
/// SPEC §6.3): a request that finds the route without a usable sign-in asks for one and is answered `401` as soon as
/// discovery has found the route's authorization server, saying whether a tab opens — never a hung request — while this
/// service runs the sign-in as `login ROUTE` would (discovery, the client, code + PKCE, stored for the next request). A
/// route with `"stepUp": "auto"` also has its step-ups opened here (``stepUp(_:_:)``).
///
/// Bounded four ways: one sign-in per route at a time here; one interactive sign-in per authorization server per
/// machine (``DiscoveredSignIn``'s lock: a second process waits for the first's instead of opening a tab); after a
/// sign-in serve opened with an authorization server was declined or not finished, none with that server — for any
/// route, from any `serve` on this machine — for ``backOff`` (``SignInBackOff``, kept in the state directory and read
/// again under the server's lock); and after any other failed sign-in, none for the route for ``backOff`` (L3 of
/// docs/discovery.md: no storm of tabs). Made only where a browser can be opened.
public final class DiscoveredSignInStarter: Service, Sendable {
    /// How long a declined or unfinished sign-in keeps the server (a failed one the route) from opening another one;
    /// and how long a step-up keeps its route and path from opening another, whatever became of it.
    static let backOff: TimeInterval = 300

    private let stateDirectory: StateDirectory
    private let console: any SignInConsole
    private let environment: [String: String]
    private let logger: Logger
    let now: @Sendable () -> Date
    private let timeout: Duration
    /// The declines noted per authorization server, on the starter's clock.
    private let declines: SignInBackOff
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
        /// Who waits to hear what becomes of each route's sign-in asked for just now — whether a tab opens — told
        /// once discovery has found its authorization server and that server's decline has been read.
        var deciding: [String: [CheckedContinuation<String, Never>]] = [:]
        /// The routes (by prefix) opening no sign-in for now.
        var pauses: [String: Pause] = [:]
        /// When each route (by prefix) and path may open a step-up again.
        var stepUpAgain: [StepUpPlace: Date] = [:]
        /// Who waits for each route's step-up sign-in, told nil once it is stored, else why not.
        var waiting: [String: [CheckedContinuation<String?, Never>]] = [:]
        /// The proxy is shutting down: nobody waits for a sign-in any more.
        var stopped = false
    }

    /// Why a route opens no sign-in, until when.
    struct Pause: Sendable {
        var until: Date
        /// What happened, for ``SignInBackOff/explanation(_:until:now:)``.
        var reason: String
    }

    /// Where a step-up was asked for: the bound of ``stepUp(_:_:)``.
    struct StepUpPlace: Hashable, Sendable {
        var route: String
        var path: String
    }

    /// - Parameters:
    ///   - console: opens the browser (and takes the sign-in's lines, for the log).
    ///   - now: the wall clock, for the back-offs here and the declines in the state directory.
    init(
        stateDirectory: StateDirectory, console: any SignInConsole, environment: [String: String], logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }, timeout: Duration = .seconds(300)
    ) {
        self.stateDirectory = stateDirectory
        self.console = console
        self.environment = environment
        self.logger = logger
        self.now = now
        self.timeout = timeout
        declines = SignInBackOff(
            store: DiscoveredSignInStore(directory: stateDirectory), length: Self.backOff, now: now)
        (requests, requestsContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Asks for a sign-in for `route`; what the `401` adds for the person at the machine. Waits, when it starts
    /// one, until discovery has found the route's authorization server (bounded by discovery's deadlines and by
    /// shutdown): a server whose last sign-in here was declined gets no tab, and the answer says so.
    func request(_ route: Route) async -> String {
        let now = now()
        enum Decision {
            case start
            case deciding
            case answer(String)
        }
        return await withCheckedContinuation { continuation in
            let decision = state.withLock { state -> Decision in
                if state.stopped { return .answer("the proxy is shutting down") }
                if state.deciding[route.prefix] != nil {
                    state.deciding[route.prefix]?.append(continuation)
                    return .deciding
                }
                if state.running.contains(route.prefix) {
                    return .answer(
                        "a sign-in is waiting in the browser on this machine: finish it there, then try again")
                }
                if let pause = state.pauses[route.prefix], pause.until > now {
                    return .answer(
                        SignInBackOff.explanation(pause.reason, until: pause.until, now: now)
                            + "; run: bearer-proxy login \(route.prefix)")
                }
                state.running.insert(route.prefix)
                state.deciding[route.prefix] = [continuation]
                return .start
            }
            switch decision {
            case .start: requestsContinuation.yield(Job(route: route))
            case .deciding: break
            case .answer(let answer): continuation.resume(returning: answer)
            }
        }
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
        // A sign-in asked for but never started waits no longer.
        stopWaiting()
    }

    private func signIn(_ job: Job) async {
        let pause = await attempt(job)
        let now = now()
        let (deciding, waiting) = state.withLock { state in
            state.running.remove(job.route.prefix)
            state.pauses[job.route.prefix] = pause
            return (
                state.deciding.removeValue(forKey: job.route.prefix) ?? [],
                state.waiting.removeValue(forKey: job.route.prefix) ?? []
            )
        }
        let refusal = pause.map { SignInBackOff.explanation($0.reason, until: $0.until, now: now) }
        for waiter in deciding {
            waiter.resume(
                returning: refusal.map { $0 + "; run: bearer-proxy login \(job.route.prefix)" }
                    ?? "the sign-in serve opened has finished: try again")
        }
        for waiter in waiting { waiter.resume(returning: refusal) }
    }

    /// The reason a route's own sign-in that failed gives.
    static let unfinished = "the last sign-in was declined or not finished"

    /// Runs the sign-in `job` asks for; nil when it was stored, else why the route opens none for now.
    private func attempt(_ job: Job) async -> Pause? {
        let route = job.route
        guard case .discover(let settings) = route.auth else { return nil }
        if let stepUp = job.stepUp {
            logger.info(
                "step-up sign-in started by serve (\"stepUp\": \"auto\")",
                metadata: ["route": "\(route.prefix)", "scopes": "\(stepUp.scopes.joined(separator: " "))"])
        } else {
            logger.info("sign-in started by serve (\"signIn\": \"auto\")", metadata: ["route": "\(route.prefix)"])
        }
        var found: DiscoveredAuthorization
        do {
            found = try await DiscoveredAuthorization.discover(for: route, settings: settings, logger: logger)
        } catch {
            logger.error("sign-in not started: \(error.explanation)", metadata: ["route": "\(route.prefix)"])
            return Pause(until: now().addingTimeInterval(Self.backOff), reason: Self.unfinished)
        }
        // Before any tab: a decline noted with this server, by this process or another, holds every route back.
        if let until = declines.until(issuer: found.issuer) {
            let reason = SignInBackOff.reason(issuer: found.issuer)
            logger.warning(
                "sign-in not opened: \(SignInBackOff.explanation(reason, until: until, now: now()))",
                metadata: ["route": "\(route.prefix)"])
            return Pause(until: until, reason: reason)
        }
        decided(
            route.prefix, "serve is opening the sign-in in the browser on this machine: finish it there, then try again"
        )
        if let stepUp = job.stepUp {
            // Asked for at the authorization request only: a refresh never widens what was granted.
            found.scopes = stepUp.scopes
            found.scopeSource = .command
        }
        do {
            let outcome = try await DiscoveredSignIn.run(
                route: route, settings: settings, found: found, caFile: route.tls.caFile,
                stateDirectory: stateDirectory, console: console, noBrowser: false, logger: logger,
                environment: environment, timeout: timeout, backOff: declines)
            logger.info(
                "sign-in finished", metadata: ["route": "\(route.prefix)", "issuer": "\(outcome.issuer)"])
            return nil
        } catch {
            logger.warning("sign-in ended: \(error.message)", metadata: ["route": "\(route.prefix)"])
        }
        // A decline noted with the server (this one's, or another process's read under the lock) holds the route
        // as long as the server; any other failure holds the route alone.
        if let until = declines.until(issuer: found.issuer) {
            return Pause(until: until, reason: SignInBackOff.reason(issuer: found.issuer))
        }
        return Pause(until: now().addingTimeInterval(Self.backOff), reason: Self.unfinished)
    }

    /// Tells who waits to hear what becomes of the route's sign-in.
    private func decided(_ route: String, _ answer: String) {
        let deciding = state.withLock { $0.deciding.removeValue(forKey: route) ?? [] }
        for waiter in deciding { waiter.resume(returning: answer) }
    }
}
