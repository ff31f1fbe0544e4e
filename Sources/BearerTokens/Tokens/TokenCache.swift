import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one owner of the account's access tokens, keyed by scope set (SPEC §7).
///
/// - ``cachedToken(for:)`` is the data plane's synchronous fast path: a usable token (≥ 5 min left) or nil.
/// - ``accessToken(for:claims:)`` fetches one when none is usable. Fetches are **single-flight**: the first caller
///   for a request asks the flow, later callers wait for that same answer, so a thousand concurrent requests on a
///   cold cache make exactly one token request.
/// - A failed fetch **throttles** its scope set: until `Retry-After` (or a short backoff) passes, callers get the
///   same failure without a new request — the provider is never hammered (protocols.md §2, MSAL's throttling).
/// - ``refreshDueTokens()`` refreshes tokens past their `refreshOn` in the background while they keep being
///   served; a failed refresh keeps the still-valid token and retries with backoff.
///
/// Each scope set's life is one ``TokenKeyStateMachine``, kept under one lock: the cache feeds it events and performs
/// the actions it returns (hand a caller a token or a failure, start a fetch, answer the waiters, tell the listener);
/// it decides nothing about a key by itself, beyond finding another key's token that covers a request's scopes.
public final class TokenCache: Sendable {
    /// Counts the changes of what decides whether a token may be sent — the tokens, their monotonic lifetimes and
    /// when they were fetched — for ``ReusableToken``. Bumped by ``State/update(_:_:)`` whenever a key's machine
    /// changes its token part (``TokenKeyStateMachine/tokenRevision``, raised by that part's own observers), so no
    /// event, today's or a later one, can leave it behind.
    private final class Changes: Sendable {
        let count = Atomic<UInt64>(0)

        func bump() {
            count.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// A caller waiting for a fetch under way; handed its outcome, or nil when it must ask again.
    private typealias Waiter = CheckedContinuation<Result<AccessToken, TokenError>?, Never>
    private typealias Machine = TokenKeyStateMachine<Waiter>

    /// One machine per scope set: each key's token, fetches and failure (``TokenKeyStateMachine``).
    private struct State {
        let changes: Changes
        let throttlesSignInRequired: Bool
        /// Changed only through ``update(_:_:)``.
        private(set) var machines: [ScopeSet: Machine] = [:]

        init(changes: Changes, throttlesSignInRequired: Bool) {
            self.changes = changes
            self.throttlesSignInRequired = throttlesSignInRequired
        }

        /// Feeds `scopes`' machine (a new one when it has none) one event, in place: bumps the change count when the
        /// event changed the machine's token part, and forgets a machine left with nothing to keep.
        mutating func update<Outcome>(_ scopes: ScopeSet, _ event: (inout Machine) -> Outcome) -> Outcome {
            let (outcome, changedToken, idle) = Self.perform(
                event,
                on: &machines[
                    scopes, default: Machine(scopes: scopes, throttlesSignInRequired: throttlesSignInRequired)])
            if changedToken { changes.bump() }
            if idle { machines[scopes] = nil }
            return outcome
        }

        private static func perform<Outcome>(
            _ event: (inout Machine) -> Outcome, on machine: inout Machine
        ) -> (Outcome, changedToken: Bool, idle: Bool) {
            let revision = machine.tokenRevision
            let outcome = event(&machine)
            return (outcome, machine.tokenRevision != revision, machine.isIdle)
        }

        /// A token that may be sent for `scopes` now: the scope set's own, else one whose granted scopes include all
        /// of them (MSAL's subset rule).
        func usable(for scopes: ScopeSet, at now: Date, uptime: Duration) -> AccessToken? {
            if let token = machines[scopes]?.sendableToken(at: now, uptime: uptime) { return token }
            for machine in machines.values {
                if let token = machine.sendableToken(at: now, uptime: uptime), token.covers(scopes) { return token }
            }
            return nil
        }

        var allTokens: [AccessToken] { machines.values.compactMap { $0.held?.token } }
    }

    private let flow: any SignInFlow
    private let now: @Sendable () -> Date
    /// The monotonic clock every duration here is measured on; only expiry, which the provider states in wall time, is
    /// compared with ``now``.
    private let uptime: @Sendable () -> Duration
    private let changes = Changes()
    private let state: Mutex<State>
    private let onChange: (@Sendable (TokenCacheChange) -> Void)?
    private let observer: (any TokenCacheObserver)?
    /// Where the key of this sign-in's DPoP-bound tokens lives (nil: it asks for bearer tokens only).
    private let proofKeys: (any DPoPKeySource)?
    /// The last key ``proofKey(for:)`` read from ``proofKeys``.
    private let keptProofKey = Mutex<DPoPKey?>(nil)
    /// Time since an arbitrary start on the system's monotonic clock (`CLOCK_BOOTTIME` on Linux: it counts
    /// suspend, and no one can set it).
    public static let systemUptime: @Sendable () -> Duration = {
        let start = ContinuousClock.now
        return { ContinuousClock.now - start }
    }()

    /// How long a failure that carries no `Retry-After` blocks identical requests, doubling per failure.
    static let baseBackoff: TimeInterval = 2
    static let maximumBackoff: TimeInterval = 60

    /// - Parameters:
    ///   - flow: where fresh tokens come from.
    ///   - now: the wall clock; tests pass their own so expiry and backoff are tested without sleeping.
    ///   - uptime: the monotonic clock for back-offs and the token-request interval; nil derives it from `now`
    ///     (tests that drive one clock), ``systemUptime`` in production.
    ///   - onChange: told each change (persistence).
    ///   - observer: told about each token request (logs, metrics).
    ///   - throttlesSignInRequired: whether "sign-in required" blocks the next requests like any failure. A flow
    ///     that answers it from local state alone (a discovered route with nothing stored) asks nobody, so there is
    ///     nothing to pace, and a sign-in made meanwhile must be used by the very next request.
    ///   - proofKeys: where the key of a sign-in that asks for DPoP-bound tokens (RFC 9449) is found — the data plane
    ///     signs each request's proof with it.
    public convenience init(
        flow: any SignInFlow, now: @escaping @Sendable () -> Date = { Date() },
        uptime: (@Sendable () -> Duration)? = nil,
        onChange: (@Sendable (TokenCacheChange) -> Void)? = nil, observer: (any TokenCacheObserver)? = nil,
        throttlesSignInRequired: Bool = true
    ) {
        self.init(
            flow: flow, now: now, uptime: uptime, onChange: onChange, observer: observer,
            throttlesSignInRequired: throttlesSignInRequired, proofKeys: nil)
    }

    package init(
        flow: any SignInFlow, now: @escaping @Sendable () -> Date = { Date() },
        uptime: (@Sendable () -> Duration)? = nil,
        onChange: (@Sendable (TokenCacheChange) -> Void)? = nil, observer: (any TokenCacheObserver)? = nil,
        throttlesSignInRequired: Bool = true, proofKeys: (any DPoPKeySource)?
    ) {
        self.proofKeys = proofKeys
        self.flow = flow
        self.now = now
        self.uptime = uptime ?? { .seconds(now().timeIntervalSince1970) }
        self.onChange = onChange
        self.observer = observer
        state = Mutex(State(changes: changes, throttlesSignInRequired: throttlesSignInRequired))
    }

    /// The flow's name, for logs and `status`.
    var flowName: String { flow.name }

    /// A usable cached token for `scopes`, without waiting: the token for exactly that set, else one whose granted
    /// scopes include all of them (MSAL's subset rule).
    public func cachedToken(for scopes: ScopeSet) -> AccessToken? {
        cachedToken(forReuse: scopes, presentedAs: .bearer).token
    }

    /// A token the data plane may send again without asking the cache (``isStillReusable(_:)``): the scope set's own
    /// token, read while it had more than its margin left by both clocks, with the limits of that and the count of
    /// changes it was read at.
    public struct ReusableToken: Sendable {
        public let token: AccessToken
        fileprivate let changes: UInt64
        /// The token's `expiresOn` less its margin, on the wall clock.
        fileprivate let wallLimit: Date
        /// The same on the monotonic clock, when the token has a monotonic lifetime.
        fileprivate let uptimeLimit: Duration?
    }

    /// ``cachedToken(for:)``, and — when that token is the scope set's own and clear of its margin by both clocks —
    /// the same as a ``ReusableToken``: one lock and one lookup for both. Only a token that can be presented as the
    /// route asks (`presentedAs`, ``fits(_:presentedAs:)``) comes out: ``accessToken(for:claims:resource:stepUp:presentedAs:)``
    /// refuses any other with the reason.
    public func cachedToken(forReuse scopes: ScopeSet, presentedAs presentation: TokenTypePreference = .bearer) -> (
        token: AccessToken?, reusable: ReusableToken?
    ) {
        let now = self.now()
        let uptime = self.uptime()
        return state.withLock { state in
            if let held = state.machines[scopes]?.held, Self.fits(held.token, presentedAs: presentation) {
                let own = held.token
                let margin = own.margin
                let wallLimit = own.expiresOn.addingTimeInterval(-margin)
                let uptimeLimit = held.lifetime.expiresAt - .seconds(margin)
                // Inside both limits the token has more than its margin left by both clocks: sendable, as
                // ``TokenKeyStateMachine/sendableToken(at:uptime:)`` would find it.
                if now < wallLimit, uptime < uptimeLimit {
                    // Read under the lock: the count that goes with the state just read.
                    let reusable = ReusableToken(
                        token: own, changes: changes.count.load(ordering: .relaxed), wallLimit: wallLimit,
                        uptimeLimit: uptimeLimit)
                    return (own, reusable)
                }
            }
            let usable = state.usable(for: scopes, at: now, uptime: uptime)
            return (usable.flatMap { Self.fits($0, presentedAs: presentation) ? $0 : nil }, nil)
        }
    }

    /// Whether `reusable` may be sent again now, as ``cachedToken(for:)`` would find it, without the lock and the
    /// lookups: nothing that decides a token's use has changed since it was read — stored, dropped, invalidated,
    /// replaced at a sign-in or sign-out, refreshed — and it is still inside its margin by both clocks, each read
    /// afresh. A change made while this runs is one made just after it, as it would be after a locked read.
    public func isStillReusable(_ reusable: ReusableToken) -> Bool {
        guard isUnchanged(reusable), now() < reusable.wallLimit else { return false }
        if let limit = reusable.uptimeLimit, uptime() >= limit { return false }
        return true
    }

    /// Whether nothing that decides a token's use has changed since `reusable` was read (``isStillReusable(_:)``
    /// without its clocks, for a caller that read them moments ago: one batch of a loop's events).
    public func isUnchanged(_ reusable: ReusableToken) -> Bool {
        changes.count.load(ordering: .acquiring) == reusable.changes
    }

    /// A token obtained less than ``minimumFetchInterval`` ago is sent while it is valid at all, even inside its
    /// margin: however short the lifetimes a provider hands out, a scope set costs at most one token request per
    /// interval (docs/tokens.md). Measured on the monotonic clock.
    static let minimumFetchInterval: TimeInterval = 10

    /// A usable token for `scopes`, fetched from the flow if none is cached; with `claims`, always a fresh one that
    /// satisfies the challenge; with `stepUp`, always the one a new sign-in for wider scopes gives (a discovered
    /// route's, SPEC §6.3). Concurrent callers for the same request share one fetch — one sign-in for a step-up. Only a
    /// ``TokenError`` comes out, so a caller maps every failure to its answer (``ProxyError``) with no catch-all.
    ///
    /// The token comes out only to a caller that can present it (`presentedAs`, a route's `tokenType`): a DPoP-bound
    /// token (RFC 9449) never to one that sends what it gets as `Authorization: Bearer` (`bearer`, every caller
    /// but the data plane's DPoP-capable routes and `token`), which gets ``boundTokenRefusal``; a bearer token never
    /// to a route that takes DPoP tokens only (`dpop`: ``bearerTokenRefusal``). The token stays cached, so a
    /// refusal costs no token request.
    public func accessToken(
        for scopes: ScopeSet, claims: String? = nil, resource: String? = nil, stepUp: StepUpRequest? = nil,
        presentedAs presentation: TokenTypePreference = .bearer
    ) async throws(TokenError) -> AccessToken {
        let token = try await anyAccessToken(for: scopes, claims: claims, resource: resource, stepUp: stepUp)
        guard Self.fits(token, presentedAs: presentation) else {
            throw token.isBound ? Self.boundTokenRefusal : Self.bearerTokenRefusal
        }
        return token
    }

    /// Whether `token` can be presented as `presentation` asks: a bound token with a proof (`dpop`, `auto`), a bearer
    /// one without (`bearer`, `auto`).
    private static func fits(_ token: AccessToken, presentedAs presentation: TokenTypePreference) -> Bool {
        switch presentation {
        case .auto: true
        case .bearer: !token.isBound
        case .dpop: token.isBound
        }
    }

    /// Why a DPoP-bound token is not handed to a bearer path: sent as a bearer token it would be refused (RFC 9449
    /// §7.2), and it is useless without a proof.
    package static let boundTokenRefusal = TokenError.misconfigured(
        reason: "the identity provider issued a DPoP-bound token (RFC 9449) for these scopes, and this route presents "
            + "tokens as bearer tokens (its \"tokenType\" is \"bearer\"); bearer-proxy never sends a DPoP-bound "
            + "token as a bearer token. Remove the route's \"tokenType\" (\"auto\" sends the token as it was "
            + "issued), or set the account's \"tokenType\" to \"bearer\".")

    /// Why a bearer token is not sent on a route that takes DPoP-bound tokens only.
    package static let bearerTokenRefusal = TokenError.misconfigured(
        reason: "the identity provider issued a bearer token for these scopes, and this route's \"tokenType\" is "
            + "\"dpop\": it sends DPoP-bound tokens only (RFC 9449). The authorization server did not bind the "
            + "token to the proxy's key: check that it supports DPoP, or set the route's \"tokenType\" to "
            + "\"auto\".")

    /// The key that proves possession of `token` (RFC 9449 §7), when it is DPoP-bound and the key it is bound to
    /// is this sign-in's: from ``proofKeys``, read once and kept while the tokens are bound to it. Nil for a bearer
    /// token, for a cache without a key, and for a token bound to a key no longer kept (another process signed out
    /// and in: the next token is bound to the new key).
    package func proofKey(for token: AccessToken) -> DPoPKey? {
        guard let thumbprint = token.boundKey, let proofKeys else { return nil }
        if let kept = keptProofKey.withLock({ $0 }), kept.thumbprint == thumbprint { return kept }
        guard let key = proofKeys.proofKey(thumbprint: thumbprint) else { return nil }
        keptProofKey.withLock { $0 = key }
        return key
    }

    private func anyAccessToken(
        for scopes: ScopeSet, claims: String?, resource: String?, stepUp: StepUpRequest?
    ) async throws(TokenError) -> AccessToken {
        let request = TokenRequest(scopes: scopes, claims: claims, resource: resource, stepUp: stepUp)
        // With claims or a step-up the caller wants a new token, whatever another key holds.
        let fresh = claims != nil || stepUp != nil
        while true {
            let now = self.now()
            let uptime = self.uptime()
            let answer: Machine.Answer = state.withLock { state in
                if !fresh, let token = state.usable(for: scopes, at: now, uptime: uptime) { return .use(token) }
                return state.update(scopes) { $0.ask(request, now: now, uptime: uptime) }
            }
            switch answer {
            case .use(let token):
                return token
            case .fail(let error):
                throw error
            case .startFetch:
                return try await fetch(request, background: false).get()
            case .wait:
                // Register inside the continuation closure (it runs synchronously). If the leader finished in
                // between, there is nothing to wait for: resume with nil and decide again.
                let shared: Result<AccessToken, TokenError>? = await withCheckedContinuation { continuation in
                    let joined = state.withLock { state in
                        state.update(scopes) { $0.join(request, waiter: continuation) }
                    }
                    if !joined { continuation.resume(returning: nil) }
                }
                if let shared { return try shared.get() }
            }
        }
    }

    /// Drops the cached token for `scopes` if it is still `rejected` (an upstream refused it), so the next request
    /// fetches a new one; a newer token fetched meanwhile is kept.
    public func invalidate(_ scopes: ScopeSet, rejected: String) {
        let removed = state.withLock { state -> Bool in
            let holding = state.machines.compactMap { $0.value.held?.token.value == rejected ? $0.key : nil }
            for key in holding { state.update(key) { _ = $0.tokenRefused(value: rejected) } }
            return !holding.isEmpty
        }
        if removed { onChange?(.rejected(value: rejected)) }
    }

    /// Drops the cached token for `scopes` if it is still `token`, without calling it rejected, after its upstream's
    /// `403` `insufficient_scope` asking for `wanted`: the next request asks the flow again, which may find a newer
    /// one — a discovered route's sign-in for more scopes. The flow hears of it (``onChange``) either way.
    public func drop(_ scopes: ScopeSet, token: String, wanting wanted: [String]) {
        state.withLock { state in
            guard state.machines[scopes] != nil else { return }
            state.update(scopes) { _ = $0.tokenRefused(value: token) }
        }
        onChange?(.insufficientScope(value: token, wanted: wanted))
    }

    /// Tells whoever listens (``onChange``) that an upstream answered a request carrying `token` without refusing it
    /// or asking for more scopes; the cache itself keeps the token as it is.
    public func answered(_ token: String) {
        onChange?(.answered(value: token))
    }

    /// Replaces every token with `tokens`, for `reason`, and reports it (tagged with its reason: persistence writes
    /// only what came from this process).
    ///
    /// - A new credential — a sign-in or sign-out here, or one elsewhere — ends the old one's failures and
    ///   back-off: they said nothing about the new account (SPEC §7).
    /// - Tokens another process stored for the same credential end the back-off only of the scope sets they bring
    ///   a usable token for: another process's write says nothing about the provider, and resetting the back-off
    ///   on every write would let several processes ask a failing provider once a second (SPEC §7: never hammer
    ///   it).
    /// - Tokens restored from the file at start-up are put in place beside what is cached.
    ///
    /// Requests already waiting for a token keep waiting for the fetch under way.
    public func replaceTokens(with tokens: [AccessToken], because reason: TokenReplacement) {
        replaceTokens(with: tokens, because: reason, unlessChangedSince: nil)
    }

    /// A count that every change of the cached tokens raises: read it before reading what the tokens should be (a
    /// file), and ``replaceTokens(with:because:unlessChangedSince:)`` puts that in place only if nothing changed
    /// meanwhile — a token fetched after the read is newer than what was read.
    package var changeCount: UInt64 { state.withLock { _ in changes.count.load(ordering: .relaxed) } }

    /// ``replaceTokens(with:because:)`` when the tokens are still as they were at `count` (``changeCount``); nil:
    /// whatever they are. Returns whether it replaced them.
    @discardableResult
    package func replaceTokens(
        with tokens: [AccessToken], because reason: TokenReplacement, unlessChangedSince count: UInt64?
    ) -> Bool {
        let now = self.now()
        let uptime = self.uptime()
        let usable = tokens.filter { $0.isUsable(at: now) }
        let current = state.withLock { state -> [AccessToken]? in
            if let count, changes.count.load(ordering: .relaxed) != count { return nil }
            // The last token for a scope set wins, as storing them in turn would have it.
            let arriving = Dictionary(usable.map { ($0.scopes, $0) }, uniquingKeysWith: { $1 })
            for scopes in Set(state.machines.keys).union(arriving.keys) {
                state.update(scopes) {
                    $0.replaceToken(with: arriving[scopes], because: reason, now: now, uptime: uptime)
                }
            }
            return state.allTokens
        }
        guard let current else { return false }
        onChange?(.replacedAll(current, because: reason))
        return true
    }

    /// Every cached token, usable or not (for persistence and `status`).
    public var allTokens: [AccessToken] { state.withLock { $0.allTokens } }

    /// Refreshes, in the caller's task, every token whose `refreshOn` has passed, unless a fetch for it is already
    /// under way or it is backing off after a failure. The current token keeps being served throughout; a failed
    /// refresh leaves it in place. Returns how many refreshes succeeded.
    @discardableResult
    public func refreshDueTokens() async -> Int {
        let now = self.now()
        let uptime = self.uptime()
        let due: [ScopeSet] = state.withLock { state in
            state.machines.compactMap { $0.value.isRefreshDue(at: now, uptime: uptime) ? $0.key : nil }
        }
        var refreshed = 0
        for scopes in due {
            // The sweep's tick, key by key: a key refreshed meanwhile (by a caller) is no longer due.
            let claimed = state.withLock { state in
                state.update(scopes) { $0.refreshTimerFired(now: now, uptime: uptime) }
            }
            guard let request = claimed else { continue }
            if case .success = await fetch(request, background: true) { refreshed += 1 }
        }
        return refreshed
    }

    /// Whether nothing here is worth keeping any more: no fetch under way, no back-off running and no token still
    /// valid by both clocks. A caller's cache on an on-behalf-of route is forgotten then (``SubjectTokenCaches``).
    package var isSpent: Bool {
        let now = self.now()
        let uptime = self.uptime()
        return state.withLock { state in
            state.machines.values.allSatisfy { machine in
                machine.fetches.isEmpty && !machine.isBackingOff(at: uptime)
                    && (machine.remaining(at: now, uptime: uptime) ?? 0) <= 0
            }
        }
    }

    /// What `status` shows per scope set: expiry, and the last refresh error — never the token.
    public func status(for scopes: ScopeSet) -> TokenStatus {
        let now = self.now()
        let uptime = self.uptime()
        return state.withLock { state in
            let token = state.usable(for: scopes, at: now, uptime: uptime)
            return TokenStatus(
                cached: token != nil, expiresOn: token?.expiresOn, refreshOn: token?.refreshOn,
                lastError: state.machines[scopes]?.lastRefreshError.map { "\($0)" }, boundKey: token?.boundKey)
        }
    }

    /// Asks the flow, as the single leader for `request`, then hands the outcome to everyone waiting.
    private func fetch(_ request: TokenRequest, background: Bool) async -> Result<AccessToken, TokenError> {
        let outcome: Result<AccessToken, TokenError>
        let started = ContinuousClock.now
        do {
            outcome = .success(try await flow.acquireToken(request))
        } catch {
            outcome = .failure(error)
        }
        let now = self.now()
        let uptime = self.uptime()
        // What the machine will make of it (an expired token is a failure), for the observer to hear first.
        let result = Machine.admitted(outcome, at: now)
        observer?.tokenFetched(
            request, outcome: result, duration: ContinuousClock.now - started, background: background)
        let completion = state.withLock { state in
            state.update(request.scopes) { $0.fetchCompleted(request, result, now: now, uptime: uptime) }
        }
        if let stored = completion.stored { onChange?(.stored(stored)) }
        for waiter in completion.waiters { waiter.resume(returning: completion.result) }
        return completion.result
    }

    /// How long a failure blocks new requests for the same scope set: the provider's `Retry-After` when it sent
    /// one, else an exponential backoff (2 s, 4 s, … 60 s).
    static func backoff(for error: TokenError, failures: Int) -> TimeInterval {
        let exponential = min(
            baseBackoff * Double(sign: .plus, exponent: max(0, failures - 1), significand: 1), maximumBackoff)
        if case .providerUnavailable(_, let retryAfter) = error { return max(TimeInterval(retryAfter), exponential) }
        return exponential
    }

    /// A wait in whole seconds for a `Retry-After` header, 1 s to a day: converted only once it is in range, so no
    /// stored time (a clock that stepped, a provider's number) can reach a trapping conversion.
    package static func wholeSeconds(_ interval: TimeInterval) -> Int {
        guard interval.isFinite else { return 1 }
        return Int(seconds: interval, rounded: .up, clampedTo: 1...86_400)
    }
}

/// A scope set's token state, as `status` shows it.
public struct TokenStatus: Sendable, Equatable {
    public var cached: Bool
    public var expiresOn: Date?
    public var refreshOn: Date?
    public var lastError: String?
    /// The thumbprint of the DPoP key the cached token is bound to (RFC 9449); nil for a bearer token.
    public var boundKey: String?

    package init(
        cached: Bool, expiresOn: Date? = nil, refreshOn: Date? = nil, lastError: String? = nil, boundKey: String? = nil
    ) {
        self.cached = cached
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
        self.lastError = lastError
        self.boundKey = boundKey
    }
}

/// Told about every token request the cache makes — for logs and metrics, never holding on to the token.
public protocol TokenCacheObserver: Sendable {
    func tokenFetched(
        _ request: TokenRequest, outcome: Result<AccessToken, TokenError>, duration: Duration, background: Bool)
}
