import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The life of one key's token in the ``TokenCache`` — today a scope set's — as a value: the cache feeds it events (a
/// caller asks, a fetch completes, the refresh sweep ticks, an upstream refuses the token, every token is replaced)
/// and performs what each returns. No I/O, no clock of its own, no references to tasks: the callers waiting for a
/// fetch are opaque `Waiter`s the machine only keeps and hands back, so every transition is tested purely
/// (`TokenKeyStateMachineTests`, `TokenKeySweepTests`).
///
/// A key's state has three parts, each changed only by the events below:
///
/// - its **token** (``held``): none, or one with its times carried over to the monotonic clock
///   (``MonotonicLifetime``) — and when this process last fetched one (``fetchedAt``), which paces the next request;
/// - its **fetches** (``fetches``): the token requests under way, one per distinct request (single flight), each with
///   the callers waiting for its answer;
/// - its **failure** (``backoff``): the last failed request's error and how long it blocks new ones (protocols.md §2,
///   MSAL's throttling), kept after it ends so the next failure backs off longer; a failed refresh also sets
///   ``lastRefreshError`` for `status`.
///
/// The phases docs/tokens.md names are their combinations (``phase``): empty → fetching → fresh → refreshing, and
/// backing off after a failure, with or without a still-valid token kept.
struct TokenKeyStateMachine<Waiter> {
    /// The token a key holds, with its expiry and refresh time on the monotonic clock from when it entered the cache.
    struct Held: Sendable {
        let token: AccessToken
        let lifetime: MonotonicLifetime

        init(_ token: AccessToken, now: Date, uptime: Duration) {
            self.token = token
            lifetime = MonotonicLifetime(token, now: now, uptime: uptime)
        }
    }

    /// A failed request's error, and until when it answers identical requests without a new one.
    struct Backoff: Sendable, Equatable {
        /// On the monotonic clock: a wall clock that steps back does not lengthen it.
        var until: Duration
        var error: TokenError
        /// Failures in a row: the exponential back-off's exponent.
        var failures: Int

        /// The stored failure, with `Retry-After` counting down to the end of the block.
        func error(at uptime: Duration) -> TokenError {
            guard case .providerUnavailable(let reason, _) = error else { return error }
            return .providerUnavailable(
                reason: reason, retryAfterSeconds: TokenCache.wholeSeconds((until - uptime) / .seconds(1)))
        }
    }

    /// A token request under way, and the callers waiting for its answer besides the one that performs it.
    struct Fetch {
        let request: TokenRequest
        var waiters: [Waiter]
        /// Started by the refresh sweep (``refreshTimerFired(now:uptime:)``): its failure is the key's refresh error.
        let isRefresh: Bool
    }

    /// The key's phase, as docs/tokens.md draws it: which of the three parts are there.
    enum Phase: Sendable, Hashable, CustomStringConvertible {
        /// No token, nothing asked, no failure.
        case empty
        /// No token; a request under way (`afterFailure`: the last one failed).
        case fetching(afterFailure: Bool)
        /// A token, nothing under way, no failure since.
        case fresh
        /// A token (still served while it is usable); a request under way.
        case refreshing(afterFailure: Bool)
        /// The last request failed, nothing is under way: identical requests get its failure until the back-off ends
        /// (`keepingToken`: a still-valid token is served meanwhile).
        case backingOff(keepingToken: Bool)

        var description: String {
            switch self {
            case .empty: "empty"
            case .fetching(let afterFailure): afterFailure ? "fetching after a failure" : "fetching"
            case .fresh: "fresh"
            case .refreshing(let afterFailure): afterFailure ? "refreshing after a failure" : "refreshing"
            case .backingOff(let keepingToken): keepingToken ? "backing off, token kept" : "backing off"
            }
        }
    }

    /// What the cache does for a caller that asked (``ask(_:now:uptime:)``).
    enum Answer: Sendable {
        /// Hand it this token.
        case use(AccessToken)
        /// Answer it with this failure at once: no request is made.
        case fail(TokenError)
        /// It leads: ask the flow, then report the outcome (``fetchCompleted(_:_:now:uptime:)``).
        case startFetch
        /// A request for the same thing is under way: add it as a waiter (``join(_:waiter:)``).
        case wait
    }

    /// What the cache does when a fetch completed: answer everyone who waited for it, and tell the cache's listener
    /// (persistence) of a stored token — one action of two parts.
    struct Completion {
        /// What the leader and every waiter get: the flow's outcome, or a failure for a token that arrived expired.
        let result: Result<AccessToken, TokenError>
        let waiters: [Waiter]
        /// The token now held, when one was stored.
        let stored: AccessToken?
    }

    let scopes: ScopeSet
    /// Whether "sign-in required" backs off like any failure (``TokenCache``'s `throttlesSignInRequired`).
    let throttlesSignInRequired: Bool

    private(set) var held: Held? = nil {
        didSet { tokenRevision &+= 1 }
    }
    /// When this process last obtained a token for the key, on the monotonic clock: a token fetched less than
    /// ``TokenCache/minimumFetchInterval`` ago is sent while it is valid at all, and a key whose tokens live shorter
    /// than that is asked for at most once per interval. Outlives the token it came with (a dropped token).
    private(set) var fetchedAt: Duration? = nil {
        didSet { tokenRevision &+= 1 }
    }
    /// Raised by every change of what decides whether a token may be sent — ``held`` and ``fetchedAt`` — by their own
    /// observers, so the cache's change count (``TokenCache/ReusableToken``) cannot miss one.
    private(set) var tokenRevision: UInt64 = 0
    /// The `resource` the last token was requested with: its refresh sends the same.
    private(set) var resource: String?
    private(set) var backoff: Backoff?
    /// The last background refresh's failure, for `status`.
    private(set) var lastRefreshError: TokenError?
    private(set) var fetches: [Fetch] = []

    init(scopes: ScopeSet, throttlesSignInRequired: Bool = true) {
        self.scopes = scopes
        self.throttlesSignInRequired = throttlesSignInRequired
    }

    var phase: Phase {
        switch (held != nil, !fetches.isEmpty, backoff != nil) {
        case (false, false, false): .empty
        case (false, true, let failed): .fetching(afterFailure: failed)
        case (true, false, false): .fresh
        case (true, true, let failed): .refreshing(afterFailure: failed)
        case (let kept, false, true): .backingOff(keepingToken: kept)
        }
    }

    /// Nothing left worth keeping: the cache forgets the key.
    var isIdle: Bool {
        held == nil && fetchedAt == nil && resource == nil && backoff == nil && lastRefreshError == nil
            && fetches.isEmpty
    }

    /// The request the key's refresh sends.
    var refreshRequest: TokenRequest { TokenRequest(scopes: scopes, resource: resource) }

    // MARK: Queries

    /// Seconds of life the held token has left by both clocks: the wall clock against its `expiresOn`, the monotonic
    /// clock against when it entered the cache.
    func remaining(at now: Date, uptime: Duration) -> TimeInterval? {
        guard let held else { return nil }
        return min(held.token.expiresOn.timeIntervalSince(now), held.lifetime.remaining(at: uptime))
    }

    /// The held token when it may be sent: it has more than its margin left by both clocks, or it is valid and was
    /// obtained less than ``TokenCache/minimumFetchInterval`` ago.
    func sendableToken(at now: Date, uptime: Duration) -> AccessToken? {
        guard let held, let left = remaining(at: now, uptime: uptime) else { return nil }
        return left > 0 && (left >= held.token.margin || fetchAge(at: uptime) != nil) ? held.token : nil
    }

    /// Seconds since the key was last fetched, on the monotonic clock, while that is under
    /// ``TokenCache/minimumFetchInterval``; nil once it is not (or when this process did not fetch it).
    func fetchAge(at uptime: Duration) -> TimeInterval? {
        guard let fetchedAt else { return nil }
        let age = (uptime - fetchedAt) / .seconds(1)
        return age >= 0 && age < TokenCache.minimumFetchInterval ? age : nil
    }

    /// Whether the refresh sweep would start a refresh now: a token past its refresh time by either clock, no request
    /// like the refresh under way, no back-off running.
    func isRefreshDue(at now: Date, uptime: Duration) -> Bool {
        guard let held else { return false }
        let due = held.token.refreshOn <= now || held.lifetime.refreshAt <= uptime
        return due && !isFetching(refreshRequest) && !isBackingOff(at: uptime)
    }

    func isFetching(_ request: TokenRequest) -> Bool {
        fetches.contains { $0.request == request }
    }

    func isBackingOff(at uptime: Duration) -> Bool {
        backoff.map { $0.until > uptime } ?? false
    }

    // MARK: Events

    /// A caller asks for `request`'s token (its scopes are the key's). With `claims` or a step-up it wants a new one,
    /// whatever is held; a step-up asks for what no cached token has, and its failure (a declined sign-in) says
    /// nothing of the token endpoint, so it neither waits out the back-off nor starts one. The cache looks for another
    /// key's token that covers the scopes (MSAL's subset rule) between the held token and this.
    mutating func ask(_ request: TokenRequest, now: Date, uptime: Duration) -> Answer {
        let fresh = request.claims != nil || request.stepUp != nil
        if !fresh, let token = sendableToken(at: now, uptime: uptime) { return .use(token) }
        let inFlight = isFetching(request)
        if request.stepUp == nil, !inFlight, let backoff, backoff.until > uptime {
            return .fail(backoff.error(at: uptime))
        }
        if !fresh, !inFlight, let wait = fetchTooSoon(at: now, uptime: uptime) { return .fail(wait) }
        if inFlight { return .wait }
        fetches.append(Fetch(request: request, waiters: [], isRefresh: false))
        return .startFetch
    }

    /// A caller told to ``Answer/wait`` registers: false when the fetch has completed meanwhile (it asks again).
    mutating func join(_ request: TokenRequest, waiter: Waiter) -> Bool {
        guard let index = fetches.firstIndex(where: { $0.request == request }) else { return false }
        fetches[index].waiters.append(waiter)
        return true
    }

    /// The refresh sweep's tick (once a second): a token past its refresh time is refreshed in the background while it
    /// keeps being served, unless a request like it is under way or a back-off runs. Returns the request to perform
    /// (then ``fetchCompleted(_:_:now:uptime:)``), or nil.
    mutating func refreshTimerFired(now: Date, uptime: Duration) -> TokenRequest? {
        guard isRefreshDue(at: now, uptime: uptime) else { return nil }
        let request = refreshRequest
        fetches.append(Fetch(request: request, waiters: [], isRefresh: true))
        return request
    }

    /// The flow answered `request`. A token is held from now on — unless it arrived expired, which counts as a
    /// failure; a failure backs off (the provider's `Retry-After`, else 2 s doubling to 60 s), keeping whatever token
    /// is held.
    mutating func fetchCompleted(
        _ request: TokenRequest, _ outcome: Result<AccessToken, TokenError>, now: Date, uptime: Duration
    ) -> Completion {
        let result = Self.admitted(outcome, at: now)
        let fetch = fetches.firstIndex { $0.request == request }.map { fetches.remove(at: $0) }
        var stored: AccessToken?
        switch result {
        case .success(let token):
            held = Held(token, now: now, uptime: uptime)
            fetchedAt = uptime
            resource = request.resource
            backoff = nil
            lastRefreshError = nil
            stored = token
        case .failure where request.stepUp != nil:
            break  // a declined sign-in, not the token endpoint's failure (``ask(_:now:uptime:)``)
        case .failure(.signInRequired) where !throttlesSignInRequired:
            backoff = nil
        case .failure(let error):
            let failures = (backoff?.failures ?? 0) + 1
            backoff = Backoff(
                until: uptime + .seconds(TokenCache.backoff(for: error, failures: failures)), error: error,
                failures: failures)
            if fetch?.isRefresh == true { lastRefreshError = error }
        }
        return Completion(result: result, waiters: fetch?.waiters ?? [], stored: stored)
    }

    /// An upstream refused the token with this value, or asked for more scopes than it carries: it is dropped if it is
    /// still the one held (a newer token fetched meanwhile stays). Returns whether it was.
    mutating func tokenRefused(value: String) -> Bool {
        guard held?.token.value == value else { return false }
        held = nil
        return true
    }

    /// Every token is replaced at once (``TokenCache/replaceTokens(with:because:)``); `token` is the key's new one.
    /// A new credential ends the old one's failures; another process's tokens for the same credential end them only
    /// where they bring a token; tokens restored at start-up are put in place beside what is there. Requests under
    /// way keep going.
    mutating func replaceToken(with token: AccessToken?, because reason: TokenReplacement, now: Date, uptime: Duration)
    {
        switch reason {
        case .signedIn, .signedOut, .changedElsewhere(sameCredential: false):
            forgetToken()
            backoff = nil
            lastRefreshError = nil
        case .changedElsewhere(sameCredential: true):
            forgetToken()
            if token != nil {
                backoff = nil
                lastRefreshError = nil
            }
        case .restored:
            break
        }
        if let token { held = Held(token, now: now, uptime: uptime) }
    }

    private mutating func forgetToken() {
        held = nil
        fetchedAt = nil
    }

    // MARK: Rules

    /// A token that arrived already expired (`expires_in` 0 or negative) as a failure: sending it would hand the
    /// upstream an expired token, and keeping it would make every request ask again; the back-off paces the next.
    static func admitted(_ outcome: Result<AccessToken, TokenError>, at now: Date) -> Result<AccessToken, TokenError> {
        guard case .success(let token) = outcome, !token.isValid(at: now) else { return outcome }
        return .failure(
            .providerUnavailable(
                reason: "the identity provider issued an access token that had already expired (expires_in ≤ 0)",
                retryAfterSeconds: Int(TokenCache.baseBackoff)))
    }

    /// The answer instead of a token request when the held token expired less than
    /// ``TokenCache/minimumFetchInterval`` after it was obtained: a provider whose tokens live shorter than that would
    /// otherwise be asked once per token lifetime, however short (docs/tokens.md).
    private func fetchTooSoon(at now: Date, uptime: Duration) -> TokenError? {
        // A token that lived shorter than the interval, not one that a wall clock stepped forward past its expiry.
        guard let held, let left = remaining(at: now, uptime: uptime), left <= 0,
            held.token.expiresOn.timeIntervalSince(held.token.issuedAt) < TokenCache.minimumFetchInterval,
            let age = fetchAge(at: uptime)
        else { return nil }
        return .providerUnavailable(
            reason: "the identity provider's tokens for this scope set expire within seconds; asking again at most "
                + "every \(Int(TokenCache.minimumFetchInterval)) s",
            retryAfterSeconds: TokenCache.wholeSeconds(TokenCache.minimumFetchInterval - age))
    }
}

extension TokenKeyStateMachine: Sendable where Waiter: Sendable {}
extension TokenKeyStateMachine.Fetch: Sendable where Waiter: Sendable {}
extension TokenKeyStateMachine.Completion: Sendable where Waiter: Sendable {}
