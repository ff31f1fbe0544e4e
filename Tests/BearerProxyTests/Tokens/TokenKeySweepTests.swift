import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

/// One key's token machine under every sequence, to depth 5, of what can happen to it: callers asking (ordinary,
/// with claims, a step-up), the flow answering the oldest request under way (a long-lived token, one that lives
/// seconds, a failure with and without `Retry-After`), the refresh sweep ticking, time passing (seconds, past the
/// refresh time, past the expiry), the wall clock stepping back an hour, an upstream refusing the token, a sign-out,
/// another process's token. The cache's part is played as ``TokenCache`` plays it, by performing the machine's
/// actions: a leader's fetch is answered by an event later, a waiter joins at once. Invariants checked after every
/// step:
///
/// - at most one request under way per distinct request (single flight); each has one leader;
/// - every caller is answered exactly once — at once, or by the completion of the fetch it leads or waits for;
/// - a token handed out has life left by the real (monotonic) clock, and more than its margin unless it was obtained
///   less than 10 s ago; an ordinary caller is never refused or made to wait while a sendable token is held;
/// - no request reaches the flow while a back-off runs (a step-up excepted), the refresh never starts one beside
///   another like it, and a failure never takes a held token away;
/// - a change of the token part changes ``TokenKeyStateMachine/tokenRevision`` (the cache's change count);
/// - from every state, answering what is under way answers everyone and leaves a token to hand out;
/// - every phase is reached.
@Suite("Token key machine: every event sequence to depth 5, pure", .ownThread)
struct TokenKeySweepTests {
    typealias Machine = TokenKeyStateMachine<Int>
    static let scopes = ScopeSet(["api://a/Read"])
    static let plain = TokenRequest(scopes: scopes)
    static let claims = TokenRequest(scopes: scopes, claims: #"{"id_token":{"acr":{"essential":true}}}"#)
    static let stepUp = TokenRequest(scopes: scopes, stepUp: StepUpRequest(scopes: ["api://a/Write"], path: "/"))

    enum Event: CaseIterable {
        case ask, askWithClaims, askStepUp
        case succeed, succeedShortLived, failWithRetryAfter, failWithoutRetryAfter
        case tick, wait5, waitPastRefresh, waitPastExpiry, wallStepsBack
        case refused, signedOut, anotherProcessStores
    }

    /// The world outside the machine: the clocks, the callers, the tokens issued.
    struct World {
        var wall = Date(timeIntervalSince1970: 1_800_000_000)
        /// The real clock: every token's true expiry is on it.
        var uptime = Duration.seconds(1_000)
        var nextCaller = 0
        var nextToken = 0
        /// The leader of each request under way.
        var leaders: [TokenRequest: Int] = [:]
        /// How many times each caller was answered.
        var answers: [Int: Int] = [:]
        /// Each token's true expiry and when it was obtained, on the real clock.
        var issued: [String: (expiry: Duration, obtained: Duration)] = [:]
        var failures: [String] = []

        mutating func token(lifetime: TimeInterval) -> AccessToken {
            nextToken += 1
            let value = "t\(nextToken)"
            issued[value] = (uptime + .seconds(lifetime), uptime)
            return AccessToken(
                value: value, scopes: TokenKeySweepTests.scopes, expiresOn: wall.addingTimeInterval(lifetime),
                issuedAt: wall)
        }

        mutating func answer(_ caller: Int) {
            answers[caller, default: 0] += 1
            if answers[caller]! > 1 { failures.append("caller \(caller) answered twice") }
        }
    }

    struct Step {
        var machine = Machine(scopes: TokenKeySweepTests.scopes)
        var world = World()
    }

    static func allows(_ event: Event, _ step: Step) -> Bool {
        switch event {
        case .succeed, .succeedShortLived, .failWithRetryAfter, .failWithoutRetryAfter:
            !step.machine.fetches.isEmpty
        case .refused: step.machine.held != nil
        default: true
        }
    }

    // MARK: The cache's part

    /// A caller asks for `request`, and the cache performs the answer.
    static func ask(_ request: TokenRequest, _ step: inout Step) {
        let caller = step.world.nextCaller
        step.world.nextCaller += 1
        let sendable = step.machine.sendableToken(at: step.world.wall, uptime: step.world.uptime)
        let backingOff = step.machine.isBackingOff(at: step.world.uptime)
        switch step.machine.ask(request, now: step.world.wall, uptime: step.world.uptime) {
        case .use(let token):
            check(served: token, &step.world)
            step.world.answer(caller)
        case .fail(let error):
            if request == plain, sendable != nil { step.world.failures.append("refused with a sendable token held") }
            if case .providerUnavailable(_, let retryAfter) = error, !(1...86_400).contains(retryAfter) {
                step.world.failures.append("Retry-After \(retryAfter)")
            }
            step.world.answer(caller)
        case .startFetch:
            if request == plain, sendable != nil { step.world.failures.append("a fetch with a sendable token held") }
            if request.stepUp == nil, backingOff { step.world.failures.append("a fetch during the back-off") }
            if step.world.leaders[request] != nil { step.world.failures.append("a second fetch for \(request)") }
            step.world.leaders[request] = caller
        case .wait:
            if request == plain, sendable != nil { step.world.failures.append("a wait with a sendable token held") }
            if !step.machine.join(request, waiter: caller) { step.world.failures.append("told to wait for nothing") }
        }
    }

    /// The flow answers the oldest request under way with `outcome`.
    static func complete(_ outcome: (inout World) -> Result<AccessToken, TokenError>, _ step: inout Step) {
        let request = step.machine.fetches[0].request
        let heldBefore = step.machine.held?.token.value
        let result = outcome(&step.world)
        let completion = step.machine.fetchCompleted(
            request, result, now: step.world.wall, uptime: step.world.uptime)
        // A refresh has no leader: nobody asked for it.
        if let leader = step.world.leaders.removeValue(forKey: request) { step.world.answer(leader) }
        for waiter in completion.waiters { step.world.answer(waiter) }
        switch completion.result {
        case .success(let token):
            if step.machine.held?.token.value != token.value { step.world.failures.append("a success not held") }
            check(served: token, &step.world)
        case .failure:
            if step.machine.held?.token.value != heldBefore {
                step.world.failures.append("a failure changed the token")
            }
        }
    }

    /// A token handed to a caller: alive by the real clock, and outside its margin unless obtained moments ago.
    static func check(served token: AccessToken, _ world: inout World) {
        guard let issued = world.issued[token.value] else {
            world.failures.append("a token nobody issued")
            return
        }
        let left = (issued.expiry - world.uptime) / .seconds(1)
        let age = (world.uptime - issued.obtained) / .seconds(1)
        if left <= 0 { world.failures.append("\(token.value) served \(-left) s past its expiry") }
        if left < token.margin && age >= TokenCache.minimumFetchInterval {
            world.failures.append("\(token.value) served inside its margin, \(age) s after it was obtained")
        }
    }

    static func apply(_ event: Event, to step: inout Step) {
        let part = (step.machine.held?.token.value, step.machine.held?.lifetime, step.machine.fetchedAt)
        let revision = step.machine.tokenRevision
        switch event {
        case .ask: ask(plain, &step)
        case .askWithClaims: ask(claims, &step)
        case .askStepUp: ask(stepUp, &step)
        case .succeed: complete({ .success($0.token(lifetime: 3600)) }, &step)
        case .succeedShortLived: complete({ .success($0.token(lifetime: 5)) }, &step)
        case .failWithRetryAfter:
            complete({ _ in .failure(.providerUnavailable(reason: "429", retryAfterSeconds: 30)) }, &step)
        case .failWithoutRetryAfter: complete({ _ in .failure(.misconfigured(reason: "invalid_scope")) }, &step)
        case .tick:
            let backingOff = step.machine.isBackingOff(at: step.world.uptime)
            let before = step.machine.fetches.map(\.request)
            if let request = step.machine.refreshTimerFired(now: step.world.wall, uptime: step.world.uptime) {
                if backingOff { step.world.failures.append("a refresh during the back-off") }
                if before.contains(request) { step.world.failures.append("a refresh beside a fetch like it") }
            }
        case .wait5: advance(5, &step)
        case .waitPastRefresh: advance(1900, &step)
        case .waitPastExpiry: advance(4000, &step)
        case .wallStepsBack: step.world.wall.addTimeInterval(-3600)
        case .refused: _ = step.machine.tokenRefused(value: step.machine.held!.token.value)
        case .signedOut:
            step.machine.replaceToken(with: nil, because: .signedOut, now: step.world.wall, uptime: step.world.uptime)
        case .anotherProcessStores:
            let token = step.world.token(lifetime: 3600)
            // Another process's token: this one did not obtain it, so it never counts as obtained moments ago.
            step.world.issued[token.value]?.obtained = .seconds(-1_000_000)
            step.machine.replaceToken(
                with: token, because: .changedElsewhere(sameCredential: true), now: step.world.wall,
                uptime: step.world.uptime)
        }
        let after = (step.machine.held?.token.value, step.machine.held?.lifetime, step.machine.fetchedAt)
        if (part.0 != after.0 || part.1 != after.1 || part.2 != after.2) && step.machine.tokenRevision == revision {
            step.world.failures.append("the token part changed and the revision did not")
        }
        let requests = step.machine.fetches.map(\.request)
        if Set(requests).count != requests.count { step.world.failures.append("two fetches for one request") }
    }

    static func advance(_ seconds: TimeInterval, _ step: inout Step) {
        step.world.wall.addTimeInterval(seconds)
        step.world.uptime += .seconds(seconds)
    }

    /// The flow answers everything under way with tokens: everyone is answered, and an ordinary caller gets a token.
    static func settles(_ start: Step) -> Bool {
        var step = start
        for _ in 0..<8 where !step.machine.fetches.isEmpty { apply(.succeed, to: &step) }
        guard step.machine.fetches.isEmpty, step.world.leaders.isEmpty else { return false }
        if step.world.answers.count != step.world.nextCaller { return false }
        // The back-off over, an ordinary caller gets a token, at once or after one fetch.
        advance(61, &step)
        let caller = step.world.nextCaller
        ask(plain, &step)
        if step.world.answers[caller] == nil { apply(.succeed, to: &step) }
        return step.world.answers[caller] == 1 && step.world.failures.isEmpty
    }

    @Test("from an empty key, every event sequence to depth 5 keeps the invariants and reaches every phase")
    func sweep() {
        var failures: [String] = []
        var phases: Set<Machine.Phase> = []
        var visited = 0
        func walk(_ step: Step, _ path: [Event]) {
            visited += 1
            phases.insert(step.machine.phase)
            if !step.world.failures.isEmpty {
                failures.append("\(path): \(step.world.failures)")
                return
            }
            if !Self.settles(step) { failures.append("\(path): does not settle") }
            guard path.count < 5, failures.count < 5 else { return }
            for event in Event.allCases where Self.allows(event, step) {
                var next = step
                Self.apply(event, to: &next)
                walk(next, path + [event])
            }
        }
        walk(Step(), [])
        #expect(failures.isEmpty, "\(failures)")
        let every: Set<Machine.Phase> = [
            .empty, .fetching(afterFailure: false), .fetching(afterFailure: true), .fresh,
            .refreshing(afterFailure: false), .refreshing(afterFailure: true), .backingOff(keepingToken: false),
            .backingOff(keepingToken: true),
        ]
        #expect(phases == every, "phases never reached: \(every.subtracting(phases))")
        #expect(visited > 100_000, "\(visited) states")
    }
}
