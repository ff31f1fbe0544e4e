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
public final class TokenCache: Sendable {
    private struct Throttle {
        /// On the monotonic clock (``uptime``): a wall clock that steps back does not lengthen it.
        var until: Duration
        var error: TokenError
        var failures: Int
    }

    /// Counts the changes of what decides whether a token may be sent — the tokens, their monotonic lifetimes and
    /// when they were fetched — for ``ReusableToken``. Bumped by the state's own observers, so no path that changes
    /// them, today's or a later one, can leave it behind.
    private final class Changes: Sendable {
        let count = Atomic<UInt64>(0)

        func bump() {
            count.wrappingAdd(1, ordering: .releasing)
        }
    }

    private struct State {
        let changes: Changes
        var tokens: [ScopeSet: AccessToken] = [:] {
            didSet { changes.bump() }
        }
        /// Who waits for the fetch under way for a request; each is handed its outcome.
        var waiters: [TokenRequest: [CheckedContinuation<Result<AccessToken, TokenError>?, Never>]] = [:]
        var throttles: [ScopeSet: Throttle] = [:]
        var lastRefreshError: [ScopeSet: TokenError] = [:]
        /// When each scope set's current token was obtained, on the monotonic clock (``uptime``).
        var fetchedAt: [ScopeSet: Duration] = [:] {
            didSet { changes.bump() }
        }
        /// Each cached token's expiry and refresh time on the monotonic clock, from when it entered the cache.
        var lifetimes: [ScopeSet: MonotonicLifetime] = [:] {
            didSet { changes.bump() }
        }
        /// The `resource` each scope set's last token was requested with: its background refresh sends the same.
        var resources: [ScopeSet: String] = [:]

        /// The request that refreshes the token for `scopes`.
        func refreshRequest(for scopes: ScopeSet) -> TokenRequest {
            TokenRequest(scopes: scopes, resource: resources[scopes])
        }

        /// Puts `token` in place for `scopes`, its times carried over to the monotonic clock.
        mutating func store(_ token: AccessToken, for scopes: ScopeSet, at now: Date, uptime: Duration) {
            tokens[scopes] = token
            lifetimes[scopes] = MonotonicLifetime(token, now: now, uptime: uptime)
        }

        /// Forgets every token.
        mutating func removeAllTokens() {
            tokens = [:]
            lifetimes = [:]
            fetchedAt = [:]
        }

        /// Seconds of life `token` (cached for `scopes`) has left by both clocks: the wall clock against its
        /// `expiresOn`, the monotonic clock against when it entered the cache (``MonotonicLifetime``).
        func remaining(_ token: AccessToken, for scopes: ScopeSet, at now: Date, uptime: Duration) -> TimeInterval {
            let wall = token.expiresOn.timeIntervalSince(now)
            guard let lifetime = lifetimes[scopes] else { return wall }
            return min(wall, lifetime.remaining(at: uptime))
        }

        /// Whether `token` is due for refresh by either clock.
        func isDue(_ token: AccessToken, for scopes: ScopeSet, at now: Date, uptime: Duration) -> Bool {
            token.refreshOn <= now || (lifetimes[scopes].map { $0.refreshAt <= uptime } ?? false)
        }
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
    private let throttlesSignInRequired: Bool

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
        self.throttlesSignInRequired = throttlesSignInRequired
        self.proofKeys = proofKeys
        self.flow = flow
        self.now = now
        self.uptime = uptime ?? { .seconds(now().timeIntervalSince1970) }
        self.onChange = onChange
        self.observer = observer
        state = Mutex(State(changes: changes))
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
            if let own = state.tokens[scopes], Self.fits(own, presentedAs: presentation) {
                let margin = own.margin
                let wallLimit = own.expiresOn.addingTimeInterval(-margin)
                let uptimeLimit = state.lifetimes[scopes].map { $0.expiresAt - .seconds(margin) }
                // Inside both limits the token has more than its margin left by both clocks: sendable, as
                // ``usable(in:for:at:uptime:)`` would find it.
                if now < wallLimit, uptimeLimit.map({ uptime < $0 }) ?? true {
                    // Read under the lock: the count that goes with the state just read.
                    let reusable = ReusableToken(
                        token: own, changes: changes.count.load(ordering: .relaxed), wallLimit: wallLimit,
                        uptimeLimit: uptimeLimit)
                    return (own, reusable)
                }
            }
            let usable = Self.usable(in: state, for: scopes, at: now, uptime: uptime)
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

    private static func usable(in state: State, for scopes: ScopeSet, at now: Date, uptime: Duration) -> AccessToken? {
        func sendable(_ key: ScopeSet, _ token: AccessToken) -> Bool {
            let left = state.remaining(token, for: key, at: now, uptime: uptime)
            return left > 0 && (left >= token.margin || fetchAge(of: token, in: state, uptime: uptime) != nil)
        }
        if let token = state.tokens[scopes], sendable(scopes, token) { return token }
        return state.tokens.first { sendable($0.key, $0.value) && $0.value.covers(scopes) }?.value
    }

    /// A token obtained less than ``minimumFetchInterval`` ago is sent while it is valid at all, even inside its
    /// margin: however short the lifetimes a provider hands out, a scope set costs at most one token request per
    /// interval (docs/tokens.md). Measured on the monotonic clock.
    static let minimumFetchInterval: TimeInterval = 10

    /// Seconds since `token`'s scope set was last fetched, on the monotonic clock, while that is under
    /// ``minimumFetchInterval``; nil once it is not (or when this process did not fetch it).
    private static func fetchAge(of token: AccessToken, in state: State, uptime: Duration) -> TimeInterval? {
        guard let fetched = state.fetchedAt[token.scopes] else { return nil }
        let age = (uptime - fetched) / .seconds(1)
        return age >= 0 && age < minimumFetchInterval ? age : nil
    }

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
        // A step-up asks for what no cached token has, and its failure (a declined sign-in) says nothing of the
        // token endpoint: it neither waits out nor starts the scope set's back-off.
        let fresh = claims != nil || stepUp != nil
        while true {
            enum Decision {
                case use(AccessToken)
                case fail(TokenError)
                case lead
                case wait
            }
            let now = self.now()
            let uptime = self.uptime()
            let decision: Decision = state.withLock { state in
                if !fresh, let token = Self.usable(in: state, for: scopes, at: now, uptime: uptime) {
                    return .use(token)
                }
                if stepUp == nil, let throttle = state.throttles[scopes], throttle.until > uptime,
                    state.waiters[request] == nil
                {
                    return .fail(Self.remaining(throttle, at: uptime))
                }
                if !fresh, state.waiters[request] == nil,
                    let wait = Self.fetchTooSoon(state.tokens[scopes], in: state, at: now, uptime: uptime)
                {
                    return .fail(wait)
                }
                if state.waiters[request] == nil {
                    state.waiters[request] = []
                    return .lead
                }
                return .wait
            }
            switch decision {
            case .use(let token):
                return token
            case .fail(let error):
                throw error
            case .lead:
                return try await fetch(request, background: false).get()
            case .wait:
                // Register inside the continuation closure (it runs synchronously). If the leader finished in
                // between, there is nothing to wait for: resume with nil and decide again.
                let shared: Result<AccessToken, TokenError>? = await withCheckedContinuation { continuation in
                    let joined = state.withLock { state -> Bool in
                        guard state.waiters[request] != nil else { return false }
                        state.waiters[request]!.append(continuation)
                        return true
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
            var removed = false
            for (key, token) in state.tokens where token.value == rejected {
                state.tokens.removeValue(forKey: key)
                state.lifetimes.removeValue(forKey: key)
                removed = true
            }
            return removed
        }
        if removed { onChange?(.rejected(value: rejected)) }
    }

    /// Drops the cached token for `scopes` if it is still `token`, without calling it rejected, after its upstream's
    /// `403` `insufficient_scope` asking for `wanted`: the next request asks the flow again, which may find a newer
    /// one — a discovered route's sign-in for more scopes. The flow hears of it (``onChange``) either way.
    public func drop(_ scopes: ScopeSet, token: String, wanting wanted: [String]) {
        state.withLock { state in
            guard state.tokens[scopes]?.value == token else { return }
            state.tokens.removeValue(forKey: scopes)
            state.lifetimes.removeValue(forKey: scopes)
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
            switch reason {
            case .signedIn, .signedOut, .changedElsewhere(sameCredential: false):
                state.removeAllTokens()
                state.throttles = [:]
                state.lastRefreshError = [:]
            case .changedElsewhere(sameCredential: true):
                state.removeAllTokens()
                for token in usable {
                    state.throttles[token.scopes] = nil
                    state.lastRefreshError[token.scopes] = nil
                }
            case .restored:
                break
            }
            for token in usable { state.store(token, for: token.scopes, at: now, uptime: uptime) }
            return Array(state.tokens.values)
        }
        guard let current else { return false }
        onChange?(.replacedAll(current, because: reason))
        return true
    }

    /// Every cached token, usable or not (for persistence and `status`).
    public var allTokens: [AccessToken] { state.withLock { Array($0.tokens.values) } }

    /// Refreshes, in the caller's task, every token whose `refreshOn` has passed, unless a fetch for it is already
    /// under way or it is backing off after a failure. The current token keeps being served throughout; a failed
    /// refresh leaves it in place. Returns how many refreshes succeeded.
    @discardableResult
    public func refreshDueTokens() async -> Int {
        let now = self.now()
        let uptime = self.uptime()
        let due: [ScopeSet] = state.withLock { state in
            state.tokens.filter { scopes, token in
                state.isDue(token, for: scopes, at: now, uptime: uptime)
                    && state.waiters[state.refreshRequest(for: token.scopes)] == nil
                    && (state.throttles[token.scopes].map { $0.until <= uptime } ?? true)
            }.map(\.value.scopes)
        }
        var refreshed = 0
        for scopes in due {
            let claimed = state.withLock { state -> TokenRequest? in
                let request = state.refreshRequest(for: scopes)
                guard state.waiters[request] == nil else { return nil }
                state.waiters[request] = []
                return request
            }
            guard let request = claimed else { continue }
            if case .success = await fetch(request, background: true) { refreshed += 1 }
        }
        return refreshed
    }

    /// What `status` shows per scope set: expiry, and the last refresh error — never the token.
    public func status(for scopes: ScopeSet) -> TokenStatus {
        let now = self.now()
        let uptime = self.uptime()
        return state.withLock { state in
            let token = Self.usable(in: state, for: scopes, at: now, uptime: uptime)
            return TokenStatus(
                cached: token != nil, expiresOn: token?.expiresOn, refreshOn: token?.refreshOn,
                lastError: state.lastRefreshError[scopes].map { "\($0)" }, boundKey: token?.boundKey)
        }
    }

    /// Asks the flow, as the single leader for `request`, then hands the outcome to everyone waiting.
    private func fetch(_ request: TokenRequest, background: Bool) async -> Result<AccessToken, TokenError> {
        var result: Result<AccessToken, TokenError>
        let started = ContinuousClock.now
        do {
            result = .success(try await flow.acquireToken(request))
        } catch {
            result = .failure(error)
        }
        if case .success(let token) = result, !token.isValid(at: self.now()) {
            // `expires_in` 0 or negative: sending it would hand the upstream an expired token, and keeping it would
            // make every request ask again. A failure instead, so the back-off paces the next attempt.
            result = .failure(
                .providerUnavailable(
                    reason: "the identity provider issued an access token that had already expired (expires_in ≤ 0)",
                    retryAfterSeconds: Int(Self.baseBackoff)))
        }
        observer?.tokenFetched(
            request, outcome: result, duration: ContinuousClock.now - started, background: background)
        let now = self.now()
        let uptime = self.uptime()
        let waiters = state.withLock { state in
            let scopes = request.scopes
            switch result {
            case .success(let token):
                state.store(token, for: scopes, at: now, uptime: uptime)
                state.resources[scopes] = request.resource
                state.fetchedAt[scopes] = uptime
                state.throttles[scopes] = nil
                state.lastRefreshError[scopes] = nil
            case .failure where request.stepUp != nil:
                break  // see `accessToken(for:claims:resource:stepUp:)`: not the token endpoint's failure
            case .failure(.signInRequired) where !throttlesSignInRequired:
                state.throttles[scopes] = nil
            case .failure(let error):
                let failures = (state.throttles[scopes]?.failures ?? 0) + 1
                state.throttles[scopes] = Throttle(
                    until: uptime + .seconds(Self.backoff(for: error, failures: failures)), error: error,
                    failures: failures)
                if background { state.lastRefreshError[scopes] = error }
            }
            return state.waiters.removeValue(forKey: request) ?? []
        }
        if case .success(let token) = result { onChange?(.stored(token)) }
        for waiter in waiters { waiter.resume(returning: result) }
        return result
    }

    /// How long a failure blocks new requests for the same scope set: the provider's `Retry-After` when it sent
    /// one, else an exponential backoff (2 s, 4 s, … 60 s).
    static func backoff(for error: TokenError, failures: Int) -> TimeInterval {
        let exponential = min(
            baseBackoff * Double(sign: .plus, exponent: max(0, failures - 1), significand: 1), maximumBackoff)
        if case .providerUnavailable(_, let retryAfter) = error { return max(TimeInterval(retryAfter), exponential) }
        return exponential
    }

    /// The answer instead of a token request when the last token for the scope set expired less than
    /// ``minimumFetchInterval`` after it was obtained: a provider whose tokens live shorter than that
    /// would otherwise be asked once per token lifetime, however short (docs/tokens.md).
    private static func fetchTooSoon(
        _ token: AccessToken?, in state: State, at now: Date, uptime: Duration
    ) -> TokenError? {
        // A token that lived shorter than the interval, not one that a wall clock stepped forward past its expiry.
        guard let token, state.remaining(token, for: token.scopes, at: now, uptime: uptime) <= 0,
            token.expiresOn.timeIntervalSince(token.issuedAt) < minimumFetchInterval,
            let age = fetchAge(of: token, in: state, uptime: uptime)
        else { return nil }
        return .providerUnavailable(
            reason: "the identity provider's tokens for this scope set expire within seconds; asking again at most "
                + "every \(Int(minimumFetchInterval)) s",
            retryAfterSeconds: wholeSeconds(minimumFetchInterval - age))
    }

    /// The stored failure, with `Retry-After` counting down to the end of the block.
    private static func remaining(_ throttle: Throttle, at uptime: Duration) -> TokenError {
        guard case .providerUnavailable(let reason, _) = throttle.error else { return throttle.error }
        return .providerUnavailable(
            reason: reason, retryAfterSeconds: wholeSeconds((throttle.until - uptime) / .seconds(1)))
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
