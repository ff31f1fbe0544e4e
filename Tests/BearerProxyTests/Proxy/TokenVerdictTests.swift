import NIOHTTP1
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane

/// What an upstream's answer says of the token a route sent (SPEC §7), decided by ``TokenVerdict`` alone: one row per
/// route kind and answer, as docs/tokens.md and the type's own table state them.
@Suite("TokenVerdict: what a 401 or 403 means for a route, pure")
struct TokenVerdictTests {
    static let bearer = TokenVerdict.Route.bearer
    static let discovered = TokenVerdict.Route.discovered(usesAccount: false, stepsUp: false)
    static let steppingUp = TokenVerdict.Route.discovered(usesAccount: false, stepsUp: true)
    static let accountsOwn = TokenVerdict.Route.discovered(usesAccount: true, stepsUp: true)

    static func decide(
        _ status: HTTPResponseStatus, _ challenge: String? = nil, route: TokenVerdict.Route,
        granted: Set<String> = ["mcp:read"]
    ) -> TokenVerdict {
        var headers = HTTPHeaders()
        if let challenge { headers.add(name: "WWW-Authenticate", value: challenge) }
        return TokenVerdict.decide(status: status, headers: headers, route: route, granted: granted)
    }

    @Test("a route that sends no token forwards everything, and asks nothing of the headers")
    func noToken() {
        for status in [HTTPResponseStatus.unauthorized, .forbidden, .ok] {
            let verdict = TokenVerdict.decide(
                status: status,
                headers: {
                    Issue.record("the headers of an answer on a route without a token were read")
                    return HTTPHeaders()
                }(), route: .noToken, granted: [])
            #expect(verdict == TokenVerdict(retry: nil, stepUp: nil, signsInItself: false, tokenEffect: .none))
        }
    }

    @Test(
        "bearer route: invalid_token refreshes, insufficient_claims with claims asks for them, anything else forwards")
    func bearerRoute() {
        #expect(Self.decide(.unauthorized, #"Bearer error="invalid_token""#, route: Self.bearer).retry == .refresh)
        let claims = Self.decide(
            .unauthorized, #"Bearer error="insufficient_claims", claims="eyJhY2Nlc3NfdG9rZW4iOnt9fQ==""#,
            route: Self.bearer)
        // The challenge's claims are base64url (OpenID Connect Core §5.5 as Entra sends them); the request, decoded.
        #expect(claims.retry == .claims(#"{"access_token":{}}"#))
        // insufficient_claims without a claims request, another code, no code, a 403 insufficient_scope, a 200.
        for (status, challenge) in [
            (HTTPResponseStatus.unauthorized, #"Bearer error="insufficient_claims""#),
            (.unauthorized, #"Bearer error="invalid_request""#),
            (.unauthorized, #"Bearer resource_metadata="https://up/.well-known/oauth-protected-resource""#),
            (.unauthorized, nil), (.forbidden, #"Bearer error="insufficient_scope", scope="mcp:write""#), (.ok, nil),
        ] {
            let verdict = Self.decide(status, challenge, route: Self.bearer)
            #expect(
                verdict == TokenVerdict(retry: nil, stepUp: nil, signsInItself: false, tokenEffect: .none),
                "\(status) \(challenge ?? "-")")
        }
    }

    @Test("discovered route's 401: refreshed once (a bare resource_metadata challenge too), never forwarded")
    func discoveredUnauthorized() {
        let refused = Self.decide(.unauthorized, #"Bearer error="invalid_token""#, route: Self.discovered)
        #expect(refused == TokenVerdict(retry: .refresh, stepUp: nil, signsInItself: true, tokenEffect: .none))
        let bare = Self.decide(
            .unauthorized, #"Bearer resource_metadata="https://up/.well-known/oauth-protected-resource""#,
            route: Self.discovered)
        #expect(bare == TokenVerdict(retry: .refresh, stepUp: nil, signsInItself: true, tokenEffect: .none))
        // A challenge that no replay fixes is still answered by the proxy; the flow hears the token was answered.
        let other = Self.decide(.unauthorized, #"Bearer error="invalid_request""#, route: Self.discovered)
        #expect(other == TokenVerdict(retry: nil, stepUp: nil, signsInItself: true, tokenEffect: .answered))
        // A 401 with no Bearer challenge is the upstream's own answer: forwarded.
        let plain = Self.decide(.unauthorized, nil, route: Self.discovered)
        #expect(plain == TokenVerdict(retry: nil, stepUp: nil, signsInItself: false, tokenEffect: .answered))
    }

    @Test("discovered route's 403 insufficient_scope: the union of scopes; replayed only with stepUp auto")
    func stepUp() {
        let challenge = #"Bearer error="insufficient_scope", scope="mcp:write""#
        let problem = Self.decide(.forbidden, challenge, route: Self.discovered)
        #expect(
            problem
                == TokenVerdict(
                    retry: nil, stepUp: ["mcp:read", "mcp:write"], signsInItself: false,
                    tokenEffect: .dropForStepUp(["mcp:read", "mcp:write"])))
        let replayed = Self.decide(.forbidden, challenge, route: Self.steppingUp)
        #expect(replayed.retry == .stepUp(["mcp:read", "mcp:write"]))
        #expect(replayed.tokenEffect == .dropForStepUp(["mcp:read", "mcp:write"]))
        // The account's own authorization server: the account's token, passed through as on a bearer route.
        let accounts = Self.decide(.forbidden, challenge, route: Self.accountsOwn)
        #expect(accounts == TokenVerdict(retry: nil, stepUp: nil, signsInItself: false, tokenEffect: .answered))
        // No scope named, or only ones unsafe in a shell: forwarded.
        for unusable in [#"Bearer error="insufficient_scope""#, #"Bearer error="insufficient_scope", scope="a'b""#] {
            let verdict = Self.decide(.forbidden, unusable, route: Self.steppingUp)
            #expect(verdict.stepUp == nil && verdict.retry == nil, "\(unusable)")
            #expect(verdict.tokenEffect == .answered)
        }
    }

    @Test("interim answers say nothing of the token, on any route")
    func interim() {
        for route in [Self.bearer, Self.discovered, Self.steppingUp] {
            for status in [HTTPResponseStatus.continue, .switchingProtocols, .processing] {
                #expect(
                    Self.decide(status, #"Bearer error="invalid_token""#, route: route)
                        == TokenVerdict(retry: nil, stepUp: nil, signsInItself: false, tokenEffect: .none))
            }
        }
    }
}
