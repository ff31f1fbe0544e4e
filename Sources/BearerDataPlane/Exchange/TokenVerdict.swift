import BearerConfiguration
import BearerHTTP
import NIOHTTP1

/// What an upstream's answer says of the token the route sent (SPEC §7; RFC 6750 §3.1; the MCP authorization
/// specification's step-up), decided in one place from the route's kind, the status and the answer's
/// `WWW-Authenticate` challenges — before the exchange machine takes the head, which then allows a replay at most once
/// and only with the whole body kept (``ExchangeStateMachine/responseHead(_:endsWithConnection:verdict:)``).
///
/// | route | answer | verdict |
/// |---|---|---|
/// | sends no token | any | forward |
/// | bearer | `401` `invalid_token` | refresh and replay |
/// | bearer, a DPoP proof sent | `401` `DPoP` `use_dpop_nonce` with a new `DPoP-Nonce` (RFC 9449 §9) | replay with a fresh proof |
/// | bearer, a DPoP proof sent | `401` `DPoP` `invalid_token` | refresh and replay |
/// | bearer | `401` `insufficient_claims` with `claims` | replay with a token for those claims |
/// | bearer | any other (`403 insufficient_scope` included) | forward |
/// | discovered | `401` with a challenge | as a bearer route, and a bare `resource_metadata` challenge refreshes too; not replayed: the proxy answers (`signsInItself`) |
/// | discovered, own sign-in | `403` `insufficient_scope` naming scopes | step-up scopes: dropped token; replayed after a sign-in with `"stepUp": "auto"`, else the step-up problem |
/// | discovered | any other final answer | forward; the route's flow hears the token was answered |
struct TokenVerdict: Sendable, Equatable {
    /// The route as far as its token goes.
    package enum Route: Sendable, Equatable {
        /// Sends no token (`none`, `passthrough`).
        case noToken
        /// Sends the account's or a bearer flow's token.
        case bearer
        /// A discovered route: its own sign-in, or the account's (`usesAccount`); `stepsUp`: `"stepUp": "auto"`.
        case discovered(usesAccount: Bool, stepsUp: Bool)
    }

    /// What the route's token source hears.
    enum TokenEffect: Sendable, Equatable {
        case none
        /// A discovered route's upstream took the token and asked for nothing more (`status` shows the last answer).
        case answered
        /// The token lacks these scopes: dropped, so that a step-up sign-in made meanwhile serves the next request.
        case dropForStepUp([String])
    }

    /// Whether the request carried a DPoP proof (RFC 9449 §7), and whether the answer gave a new nonce for the next.
    package enum Proof: Sendable, Equatable {
        case none
        case sent(newNonce: Bool)
    }

    /// A replay with another token that could fix the answer; nil: none.
    var retry: ExchangeStateMachine.TokenRetry?
    /// The scopes a discovered route's sign-in needs after a `403` `insufficient_scope`.
    package var stepUp: [String]?
    /// A discovered route's `401` with a challenge: answered by the proxy, never forwarded.
    var signsInItself: Bool
    var tokenEffect: TokenEffect

    /// The verdict for an answer with `status` and `headers` to a request on `route` whose token was granted
    /// `granted`. The headers are asked for only when the status makes them matter (a `401` or `403` on a route that
    /// sends a token): turning a response's field lines into `HTTPHeaders` costs a string per field.
    static func decide(
        status: HTTPResponseStatus, headers: @autoclosure () -> HTTPHeaders, route: Route,
        granted: @autoclosure () -> Set<String>, proof: Proof = .none
    ) -> TokenVerdict {
        var verdict = TokenVerdict(retry: nil, stepUp: nil, signsInItself: false, tokenEffect: .none)
        guard status.code / 100 != 1 else { return verdict }
        switch route {
        case .noToken:
            return verdict
        case .bearer:
            if status == .unauthorized {
                if case .sent(let newNonce) = proof {
                    verdict.retry = proofRetry(BearerChallenge.all(in: headers(), scheme: "dpop"), newNonce: newNonce)
                } else {
                    verdict.retry = tokenRetry(BearerChallenge.all(in: headers()), discovered: false)
                }
            }
        case .discovered(let usesAccount, let stepsUp):
            if status == .unauthorized {
                let challenges = BearerChallenge.all(in: headers())
                verdict.retry = tokenRetry(challenges, discovered: true)
                verdict.signsInItself = !challenges.isEmpty
            } else if status == .forbidden, !usesAccount,
                let scopes = StepUpScopes.requested(by: headers(), granted: granted())
            {
                verdict.stepUp = scopes
                verdict.retry = stepsUp ? .stepUp(scopes) : nil
                verdict.tokenEffect = .dropForStepUp(scopes)
            }
            if verdict.stepUp == nil, verdict.retry == nil { verdict.tokenEffect = .answered }
        }
        return verdict
    }

    /// Whether the `DPoP` `challenges` of a `401` to a request with a proof can be met by one replay (RFC 9449 §7.1,
    /// §9): `use_dpop_nonce` with a nonce the answer gave (one it did not give leaves nothing new to send), or what
    /// a bearer challenge's code would fix.
    static func proofRetry(_ challenges: [BearerChallenge], newNonce: Bool) -> ExchangeStateMachine.TokenRetry? {
        if challenges.first?.error == "use_dpop_nonce" { return newNonce ? .freshProof : nil }
        return tokenRetry(challenges, discovered: false)
    }

    /// Whether the `Bearer` `challenges` of a `401` reject the token in a way one replay can fix: `invalid_token`, or
    /// `insufficient_claims` with a `claims` request. On a `discovered` route a challenge that names
    /// `resource_metadata` with no error code refuses the token too: RFC 6750 §3.1 lets a server leave the code out,
    /// and RFC 9728 §5.1's challenge is how an MCP server says "not with this token" — so it is taken as
    /// `invalid_token`, and the route's flow runs discovery again (bounded) before a new token. A bearer route never
    /// starts discovery.
    static func tokenRetry(_ challenges: [BearerChallenge], discovered: Bool) -> ExchangeStateMachine.TokenRetry? {
        guard let challenge = challenges.first else { return nil }
        switch challenge.error {
        case "invalid_token": return .refresh
        case "insufficient_claims": return challenge.claims.map { .claims($0) }
        default:
            let bare = challenges.contains { $0.error == nil && $0.resourceMetadata != nil }
            return discovered && bare ? .refresh : nil
        }
    }
}
