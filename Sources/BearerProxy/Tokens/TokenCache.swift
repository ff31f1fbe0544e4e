import Foundation
import Synchronization

/// The one owner of the account's access tokens, keyed by scope set.
///
/// Two entry points: ``cachedToken(for:)`` is the data plane's synchronous fast path (a usable token or nil, no
/// suspension), and ``accessToken(for:)`` fetches one when none is usable. Fetches are single-flight (SPEC §7): the
/// first caller for a scope set asks the flow, later callers wait for that same answer, so a thousand concurrent
/// requests on a cold cache make exactly one token request.
public final class TokenCache: Sendable {
    private struct State {
        var tokens: [ScopeSet: AccessToken] = [:]
        var waiters: [ScopeSet: [CheckedContinuation<AccessToken?, any Error>]] = [:]
    }

    private let flow: any SignInFlow
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    /// - Parameters:
    ///   - flow: where fresh tokens come from.
    ///   - now: the wall clock; tests pass their own so expiry is tested without sleeping.
    public init(flow: any SignInFlow, now: @escaping @Sendable () -> Date = { Date() }) {
        self.flow = flow
        self.now = now
    }

    /// The flow's name, for logs and `status`.
    public var flowName: String { flow.name }

    /// A cached token for `scopes` that is still usable, without waiting.
    public func cachedToken(for scopes: ScopeSet) -> AccessToken? {
        let now = self.now()
        return state.withLock { state in
            guard let token = state.tokens[scopes], token.isUsable(at: now) else { return nil }
            return token
        }
    }

    /// A usable token for `scopes`, fetched from the flow if none is cached. Concurrent callers share one fetch.
    public func accessToken(for scopes: ScopeSet) async throws -> AccessToken {
        while true {
            let now = self.now()
            let isLeader: Bool? = state.withLock { state in
                if let token = state.tokens[scopes], token.isUsable(at: now) { return nil }
                if state.waiters[scopes] == nil {
                    state.waiters[scopes] = []
                    return true
                }
                return false
            }
            switch isLeader {
            case nil:
                if let token = cachedToken(for: scopes) { return token }
            case true?:
                return try await fetch(scopes)
            case false?:
                // Register inside the continuation closure (it runs synchronously). If the leader finished in
                // between, there is nothing to wait for: resume with nil and decide again.
                let shared: AccessToken? = try await withCheckedThrowingContinuation { continuation in
                    let joined = state.withLock { state -> Bool in
                        guard state.waiters[scopes] != nil else { return false }
                        state.waiters[scopes]!.append(continuation)
                        return true
                    }
                    if !joined { continuation.resume(returning: nil) }
                }
                if let shared { return shared }
            }
        }
    }

    /// Drops the cached token for `scopes` (used when an upstream rejects it).
    public func invalidate(_ scopes: ScopeSet) {
        state.withLock { _ = $0.tokens.removeValue(forKey: scopes) }
    }

    private func fetch(_ scopes: ScopeSet) async throws -> AccessToken {
        let result: Result<AccessToken, TokenError>
        do {
            result = .success(try await flow.acquireToken(for: scopes))
        } catch {
            result = .failure(error)
        }
        let waiters = state.withLock { state in
            if case .success(let token) = result { state.tokens[scopes] = token }
            return state.waiters.removeValue(forKey: scopes) ?? []
        }
        for waiter in waiters { waiter.resume(with: result.map { Optional($0) }.mapError { $0 as any Error }) }
        return try result.get()
    }
}
