import BearerConfiguration
import BearerSignIn
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `"stepUp": "auto"` (SPEC §6.3): the sign-in for wider scopes that a discovered route's `403` `insufficient_scope`
/// asks for, opened by `serve` and waited for, so that the request can go again once.
///
/// A hostile or confused upstream could ask for ever more scopes, on every path: each ask would be a browser tab.
/// Bounded: one sign-in per route at a time (a step-up asked for meanwhile is refused, not queued); at most one
/// step-up per route and path per ``backOff``, whatever became of it; none on a route for ``backOff`` after a
/// sign-in there failed, nor with an authorization server after one serve opened there was declined or not
/// finished (``SignInBackOff``); and every one shows its scopes on the authorization server's consent
/// page, where the person at the machine decides.
extension DiscoveredSignInStarter {
    /// Opens the sign-in for `request.scopes` on `route` and waits until it is stored: nil then, else why none was
    /// (for the step-up problem's detail; never a token, code or verifier). Returns at shutdown too.
    func stepUp(_ route: Route, _ request: StepUpRequest) async -> String? {
        let now = now()
        let place = StepUpPlace(route: route.prefix, path: request.path)
        enum Decision {
            case start
            case refuse(String)
        }
        let decision = state.withLock { state -> Decision in
            if state.stopped { return .refuse("the proxy is shutting down") }
            if state.running.contains(route.prefix) {
                return .refuse("a sign-in is waiting in the browser on this machine: finish it there, then try again")
            }
            if let pause = state.pauses[route.prefix], pause.until > now {
                return .refuse(SignInBackOff.explanation(pause.reason, until: pause.until, now: now))
            }
            if let until = state.stepUpAgain[place], until > now {
                let seconds = Int(until.timeIntervalSince(now).rounded(.up))
                return .refuse(
                    "serve opened a sign-in for more scopes on this path less than \(Int(Self.backOff)) s ago, so it "
                        + "opens none for \(seconds) s")
            }
            state.stepUpAgain = state.stepUpAgain.filter { $0.value > now }
            state.stepUpAgain[place] = now.addingTimeInterval(Self.backOff)
            state.running.insert(route.prefix)
            return .start
        }
        if case .refuse(let why) = decision { return why }
        // Registered before the sign-in is asked for, so that its end cannot come first; ``stopWaiting()`` and the
        // sign-in's end resume it, whichever comes first.
        return await withCheckedContinuation { continuation in
            let stopped = state.withLock { state -> Bool in
                guard !state.stopped else { return true }
                state.waiting[route.prefix, default: []].append(continuation)
                return false
            }
            if stopped {
                state.withLock { _ = $0.running.remove(route.prefix) }
                return continuation.resume(returning: "the proxy is shutting down")
            }
            requestsContinuation.yield(Job(route: route, stepUp: request))
        }
    }

    /// Ends every wait for a sign-in, at shutdown: the requests behind them are answered now.
    func stopWaiting() {
        let (deciding, waiting) = state.withLock { state in
            state.stopped = true
            defer {
                state.deciding = [:]
                state.waiting = [:]
            }
            return (state.deciding.values.flatMap { $0 }, state.waiting.values.flatMap { $0 })
        }
        for waiter in deciding { waiter.resume(returning: "the proxy is shutting down") }
        for waiter in waiting { waiter.resume(returning: "the proxy is shutting down") }
    }
}
