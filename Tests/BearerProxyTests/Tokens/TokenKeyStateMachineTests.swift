import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

/// Each transition of one key's token machine, and the action it returns, without a cache, a flow or a task: callers
/// are numbers, the clocks are arguments.
@Suite("Token key machine: each event's transition and action, pure")
struct TokenKeyStateMachineTests {
    typealias Machine = TokenKeyStateMachine<Int>
    static let scopes = ScopeSet(["api://a/Read"])
    static let wallStart = Date(timeIntervalSince1970: 1_800_000_000)
    static let plain = TokenRequest(scopes: scopes)

    /// The clocks at `seconds` after the start: the wall clock and the monotonic one move together.
    static func at(_ seconds: TimeInterval) -> (now: Date, uptime: Duration) {
        (wallStart.addingTimeInterval(seconds), .seconds(1_000 + seconds))
    }

    static func token(
        _ value: String, issuedAt seconds: TimeInterval = 0, lifetime: TimeInterval = 3600,
        refreshIn: TimeInterval? = nil
    ) -> AccessToken {
        let issued = wallStart.addingTimeInterval(seconds)
        return AccessToken(
            value: value, scopes: scopes, expiresOn: issued.addingTimeInterval(lifetime),
            refreshOn: refreshIn.map { issued.addingTimeInterval($0) }, issuedAt: issued)
    }

    /// A machine holding `token`, fetched at `seconds`.
    static func fresh(_ token: AccessToken, at seconds: TimeInterval = 0) -> Machine {
        var machine = Machine(scopes: scopes)
        let (now, uptime) = at(seconds)
        guard case .startFetch = machine.ask(plain, now: now, uptime: uptime) else { fatalError("no fetch") }
        _ = machine.fetchCompleted(plain, .success(token), now: now, uptime: uptime)
        return machine
    }

    static func unavailable(retryAfter: Int) -> TokenError {
        .providerUnavailable(reason: "down", retryAfterSeconds: retryAfter)
    }

    @Test("empty: the first caller starts the fetch, the next ones wait for it and get its answer")
    func singleFlight() {
        var machine = Machine(scopes: Self.scopes)
        let (now, uptime) = Self.at(0)
        #expect(machine.phase == .empty && machine.isIdle)
        guard case .startFetch = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("the first caller does not lead")
            return
        }
        #expect(machine.phase == .fetching(afterFailure: false))
        for waiter in 1...3 {
            guard case .wait = machine.ask(Self.plain, now: now, uptime: uptime) else {
                Issue.record("caller \(waiter) does not wait")
                return
            }
            let joined = machine.join(Self.plain, waiter: waiter)
            #expect(joined)
        }
        let revision = machine.tokenRevision
        let token = Self.token("t1")
        let completion = machine.fetchCompleted(Self.plain, .success(token), now: now, uptime: uptime)
        #expect(completion.waiters == [1, 2, 3])
        #expect(completion.stored?.value == "t1")
        #expect((try? completion.result.get())?.value == "t1")
        #expect(machine.phase == .fresh && machine.fetches.isEmpty)
        #expect(machine.tokenRevision != revision, "a stored token changes the token part")
        guard case .use(let used) = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("a fresh token is not used")
            return
        }
        #expect(used.value == "t1")
        let joinedNothing = machine.join(Self.plain, waiter: 4)
        #expect(!joinedNothing, "no fetch to join: the caller asks again")
    }

    @Test(
        "a failure answers every waiter, holds nothing, and backs off: Retry-After counts down on the monotonic clock")
    func failureBacksOff() {
        var machine = Machine(scopes: Self.scopes)
        var (now, uptime) = Self.at(0)
        _ = machine.ask(Self.plain, now: now, uptime: uptime)
        _ = machine.ask(Self.plain, now: now, uptime: uptime)
        let joined = machine.join(Self.plain, waiter: 7)
        #expect(joined)
        let completion = machine.fetchCompleted(
            Self.plain, .failure(Self.unavailable(retryAfter: 30)), now: now, uptime: uptime)
        #expect(completion.waiters == [7] && completion.stored == nil)
        #expect(machine.held == nil && machine.phase == .backingOff(keepingToken: false))
        #expect(machine.lastRefreshError == nil, "a caller's fetch is not a refresh")
        (now, uptime) = Self.at(20)
        guard case .fail(let error) = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("a request inside the back-off was not refused")
            return
        }
        #expect(error == Self.unavailable(retryAfter: 10))
        // The wall clock stepped back an hour does not lengthen it.
        guard
            case .startFetch = machine.ask(
                Self.plain, now: now.addingTimeInterval(-3600), uptime: uptime + .seconds(10))
        else {
            Issue.record("the back-off outlived its Retry-After")
            return
        }
        #expect(machine.phase == .fetching(afterFailure: true))
    }

    @Test("failures without Retry-After back off 2 s, then 4 s: the count survives the back-off's end")
    func exponential() {
        var machine = Machine(scopes: Self.scopes)
        let refused = TokenError.misconfigured(reason: "bad scope")
        var (now, uptime) = Self.at(0)
        _ = machine.ask(Self.plain, now: now, uptime: uptime)
        _ = machine.fetchCompleted(Self.plain, .failure(refused), now: now, uptime: uptime)
        #expect(machine.backoff == .init(until: uptime + .seconds(2), error: refused, failures: 1))
        (now, uptime) = Self.at(2)
        guard case .startFetch = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("no fetch after the back-off")
            return
        }
        _ = machine.fetchCompleted(Self.plain, .failure(refused), now: now, uptime: uptime)
        #expect(machine.backoff == .init(until: uptime + .seconds(4), error: refused, failures: 2))
        guard case .fail(refused) = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("a configuration error is not repeated during the back-off")
            return
        }
    }

    @Test("a token that arrives expired is a failure: never held, the back-off paces the next request")
    func expiredOnArrival() {
        var machine = Machine(scopes: Self.scopes)
        let (now, uptime) = Self.at(0)
        _ = machine.ask(Self.plain, now: now, uptime: uptime)
        let completion = machine.fetchCompleted(
            Self.plain, .success(Self.token("dead", lifetime: 0)), now: now, uptime: uptime)
        #expect(completion.stored == nil && machine.held == nil)
        guard case .failure(.providerUnavailable(_, 2)) = completion.result else {
            Issue.record("not a failure with the base back-off: \(completion.result)")
            return
        }
        #expect(machine.phase == .backingOff(keepingToken: false))
    }

    @Test("refresh: due by either clock, one at a time, the old token served meanwhile; its failure keeps it")
    func refresh() {
        var machine = Self.fresh(Self.token("t1", refreshIn: 1800))
        var (now, uptime) = Self.at(1000)
        #expect(!machine.isRefreshDue(at: now, uptime: uptime))
        let early = machine.refreshTimerFired(now: now, uptime: uptime)
        #expect(early == nil)
        // Due on the monotonic clock although the wall clock stepped back.
        (now, uptime) = Self.at(1900)
        #expect(machine.isRefreshDue(at: now.addingTimeInterval(-3600), uptime: uptime))
        let request = machine.refreshTimerFired(now: now, uptime: uptime)
        #expect(request == Self.plain)
        #expect(machine.phase == .refreshing(afterFailure: false))
        let second = machine.refreshTimerFired(now: now, uptime: uptime)
        #expect(second == nil, "a second refresh while one runs")
        guard case .use(let old) = machine.ask(Self.plain, now: now, uptime: uptime), old.value == "t1" else {
            Issue.record("the still-valid token is not served during its refresh")
            return
        }
        let failure = Self.unavailable(retryAfter: 60)
        _ = machine.fetchCompleted(Self.plain, .failure(failure), now: now, uptime: uptime)
        #expect(machine.held?.token.value == "t1" && machine.lastRefreshError == failure)
        #expect(machine.phase == .backingOff(keepingToken: true))
        guard case .use = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("the still-valid token is not served after its refresh failed")
            return
        }
        let duringBackoff = machine.refreshTimerFired(now: now, uptime: uptime + .seconds(59))
        #expect(duringBackoff == nil, "refresh inside back-off")
        (now, uptime) = Self.at(1960)
        let retry = machine.refreshTimerFired(now: now, uptime: uptime)
        #expect(retry == Self.plain)
        let completion = machine.fetchCompleted(
            Self.plain, .success(Self.token("t2", issuedAt: 1960)), now: now, uptime: uptime)
        #expect(completion.stored?.value == "t2" && machine.lastRefreshError == nil && machine.backoff == nil)
        #expect(machine.phase == .fresh)
    }

    @Test("a refresh sends the resource the token was requested with")
    func refreshKeepsResource() {
        var machine = Machine(scopes: Self.scopes)
        let (now, uptime) = Self.at(0)
        let request = TokenRequest(scopes: Self.scopes, resource: "https://api.example")
        _ = machine.ask(request, now: now, uptime: uptime)
        _ = machine.fetchCompleted(request, .success(Self.token("t1")), now: now, uptime: uptime)
        let later = Self.at(1900)
        let refresh = machine.refreshTimerFired(now: later.now, uptime: later.uptime)
        #expect(refresh == request)
    }

    @Test(
        "claims bypass the held token but not the back-off; a step-up bypasses both, and its failure backs off nothing")
    func claimsAndStepUp() {
        var machine = Self.fresh(Self.token("t1"))
        let (now, uptime) = Self.at(0)
        let claims = TokenRequest(scopes: Self.scopes, claims: #"{"access_token":{"acrs":{"values":["c1"]}}}"#)
        guard case .startFetch = machine.ask(claims, now: now, uptime: uptime) else {
            Issue.record("a claims challenge was answered with the held token")
            return
        }
        guard case .use = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("an ordinary request waits for a claims fetch")
            return
        }
        _ = machine.fetchCompleted(claims, .failure(Self.unavailable(retryAfter: 30)), now: now, uptime: uptime)
        guard case .fail = machine.ask(claims, now: now, uptime: uptime) else {
            Issue.record("a claims request during the back-off reached the provider")
            return
        }
        let stepUp = TokenRequest(scopes: Self.scopes, stepUp: StepUpRequest(scopes: ["api://a/Write"], path: "/x"))
        guard case .startFetch = machine.ask(stepUp, now: now, uptime: uptime) else {
            Issue.record("a step-up waited out the token endpoint's back-off")
            return
        }
        let before = machine.backoff
        _ = machine.fetchCompleted(stepUp, .failure(.signInRequired(reason: "declined")), now: now, uptime: uptime)
        #expect(machine.backoff == before)
    }

    @Test("sign-in required backs off only when the cache says so")
    func signInRequired() {
        let failure = TokenError.signInRequired(reason: "nothing stored")
        for throttles in [true, false] {
            var machine = Machine(scopes: Self.scopes, throttlesSignInRequired: throttles)
            let (now, uptime) = Self.at(0)
            _ = machine.ask(Self.plain, now: now, uptime: uptime)
            _ = machine.fetchCompleted(Self.plain, .failure(failure), now: now, uptime: uptime)
            #expect((machine.backoff != nil) == throttles)
        }
    }

    @Test("tokens that live seconds: served while valid in their first 10 s, then at most one request per 10 s")
    func shortLived() {
        var machine = Self.fresh(Self.token("short", lifetime: 5))
        var (now, uptime) = Self.at(4)
        guard case .use = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("a valid token inside its margin, fetched 4 s ago, is not served")
            return
        }
        (now, uptime) = Self.at(6)
        guard case .fail(.providerUnavailable(_, 4)) = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("a key whose tokens live 5 s was asked again within 10 s")
            return
        }
        (now, uptime) = Self.at(10)
        guard case .startFetch = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("no request 10 s after the last")
            return
        }
    }

    @Test("a token is served only while both clocks give it more than its margin")
    func twoClocks() {
        let machine = Self.fresh(Self.token("t1"))
        let (now, uptime) = Self.at(3000)
        #expect(machine.sendableToken(at: now, uptime: uptime)?.value == "t1")
        // The wall clock stepped back an hour: the monotonic clock still says 5 minutes are not left.
        #expect(machine.sendableToken(at: now.addingTimeInterval(-3600), uptime: uptime + .seconds(400)) == nil)
        // Stepped forward past the expiry: the wall clock alone says so.
        #expect(machine.sendableToken(at: now.addingTimeInterval(3600), uptime: uptime) == nil)
    }

    @Test("an upstream's refusal drops the token only if it is still the one held; the fetch time stays")
    func refusal() {
        var machine = Self.fresh(Self.token("t1"))
        let revision = machine.tokenRevision
        let otherDropped = machine.tokenRefused(value: "t0")
        #expect(!otherDropped)
        #expect(machine.tokenRevision == revision)
        let dropped = machine.tokenRefused(value: "t1")
        #expect(dropped)
        #expect(machine.held == nil && machine.fetchedAt != nil && machine.tokenRevision != revision)
        let (now, uptime) = Self.at(1)
        guard case .startFetch = machine.ask(Self.plain, now: now, uptime: uptime) else {
            Issue.record("no new request after the refusal")
            return
        }
    }

    @Test(
        "replacing every token: a new credential ends the back-off, another process's token ends it only with a token")
    func replacement() {
        func failed() -> Machine {
            var machine = Self.fresh(Self.token("t1", refreshIn: 1800))
            let (now, uptime) = Self.at(1900)
            _ = machine.refreshTimerFired(now: now, uptime: uptime)
            _ = machine.fetchCompleted(Self.plain, .failure(Self.unavailable(retryAfter: 60)), now: now, uptime: uptime)
            return machine
        }
        let (now, uptime) = Self.at(1901)
        var signedOut = failed()
        signedOut.replaceToken(with: nil, because: .signedOut, now: now, uptime: uptime)
        #expect(signedOut.isIdle, "nothing of the old credential is kept")

        var elsewhereWithout = failed()
        elsewhereWithout.replaceToken(
            with: nil, because: .changedElsewhere(sameCredential: true), now: now, uptime: uptime)
        #expect(elsewhereWithout.held == nil && elsewhereWithout.backoff != nil)

        var elsewhereWith = failed()
        elsewhereWith.replaceToken(
            with: Self.token("t2", issuedAt: 1901), because: .changedElsewhere(sameCredential: true), now: now,
            uptime: uptime)
        #expect(elsewhereWith.held?.token.value == "t2" && elsewhereWith.backoff == nil)

        var restored = failed()
        let revision = restored.tokenRevision
        restored.replaceToken(with: nil, because: .restored, now: now, uptime: uptime)
        #expect(restored.tokenRevision == revision && restored.held?.token.value == "t1" && restored.backoff != nil)
    }

    @Test("a machine with nothing left to keep is idle; one that fetched keeps its pace and resource")
    func idle() {
        var machine = Machine(scopes: Self.scopes)
        let (now, uptime) = Self.at(0)
        machine.replaceToken(with: Self.token("t1"), because: .restored, now: now, uptime: uptime)
        #expect(!machine.isIdle && machine.fetchedAt == nil)
        let dropped = machine.tokenRefused(value: "t1")
        #expect(dropped)
        #expect(machine.isIdle)
    }
}
