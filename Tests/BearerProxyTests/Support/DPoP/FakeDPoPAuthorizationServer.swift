import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A fake OAuth authorization server on 127.0.0.1 (port chosen by the OS) that issues DPoP-bound tokens and checks
/// every proof as RFC 9449 §4.3 asks a server to, with ``DPoPProofVerifier``: signature against the header's `jwk`,
/// `typ`, `alg`, no private key, `htm`/`htu` against the request, `iat` within a window, `jti` never reused, and the
/// nonce it demands (§8).
///
/// Serves its discovery document (with `dpop_signing_alg_values_supported`: `ES256` by default, `EdDSA` or both in
/// a mode, and proofs of other algorithms are refused), a token endpoint (refresh token, client
/// credentials, device code) and a device authorization endpoint that approves at once. A token issued to a proof
/// is `token_type` `DPoP` with `cnf.jkt` = the key's thumbprint (§6.1), and its refresh token is bound to the same
/// key (§5: the proxy is a public client): redeeming it with another key, or without a proof, is `invalid_grant`.
final class FakeDPoPAuthorizationServer: TestServer {
    typealias NonceRule = FakeDPoPNonces.Rule

    /// One token endpoint request, as it was judged.
    struct Recorded: Sendable {
        var grant: String
        var status: Int
        var error: String?
        var description: String?
        var accepted: DPoPProofVerifier.Accepted?
        /// Whether the request carried a `DPoP` header at all.
        var hadProof: Bool
        /// The proofs it carried, for tests that look for them where they must not be.
        var proofs: [String] = []
    }

    final class State: Sendable {
        struct Data {
            var verifier = DPoPProofVerifier()
            var nonce = FakeDPoPNonces(prefix: "nonce")
            var recorded: [Recorded] = []
            /// Refresh tokens still valid, with the thumbprint each is bound to (nil: a bearer one).
            var refreshTokens: [String: String?] = [:]
            var issued = 0
            var base = ""
            /// `now`'s offset for proofs' `iat`, so a test can make the server's clock differ.
            var clockSkew: TimeInterval = 0
        }

        let data = Mutex(Data())
    }

    private let state: State
    private let server: FakeEndpointServer

    private init(state: State, server: FakeEndpointServer) {
        self.state = state
        self.server = server
    }

    static func start(algorithms: [String] = ["ES256"], nonce: NonceRule = .never) async throws
        -> FakeDPoPAuthorizationServer
    {
        let state = State()
        // It verifies what it offers; one that says nothing takes ES256, as RFC 9449 servers are expected to.
        state.data.withLock { $0.verifier.algorithms = Set(algorithms.isEmpty ? ["ES256"] : algorithms) }
        let responder = FakeDPoPResponder(algorithms: algorithms, nonceRule: nonce, state: state)
        let server = try await FakeEndpointServer.start(responder)
        state.data.withLock { $0.base = "http://127.0.0.1:\(server.port)" }
        return FakeDPoPAuthorizationServer(state: state, server: server)
    }

    func shutdown() async {
        await server.shutdown()
    }

    /// The issuer (and base URL): `http://127.0.0.1:<port>`.
    var issuer: String { "http://127.0.0.1:\(server.port)" }
    var tokenEndpoint: String { issuer + "/token" }

    var requests: [Recorded] { state.data.withLock { $0.recorded } }
    var currentNonce: String { state.data.withLock { $0.nonce.current } }

    /// A refresh token as if from an earlier sign-in, bound to `thumbprint` (nil: a bearer one).
    func issueRefreshToken(boundTo thumbprint: String?) -> String {
        state.data.withLock { data in
            data.issued += 1
            let token = "rt-\(data.issued)"
            data.refreshTokens[token] = .some(thumbprint)
            return token
        }
    }

    /// Whether `token` is a refresh token still valid, and the thumbprint it is bound to.
    func binding(ofRefreshToken token: String) -> String?? {
        state.data.withLock { $0.refreshTokens[token] }
    }

    /// A new current nonce: proofs carrying the old one are refused with `use_dpop_nonce`.
    func rotateNonce() {
        state.data.withLock { $0.nonce.rotate() }
    }

    /// Makes the server's clock run `seconds` ahead of the proxy's.
    func skewClock(by seconds: TimeInterval) {
        state.data.withLock { $0.clockSkew = seconds }
    }
}

/// The fake's answers. Called on the connections' event loops.
private struct FakeDPoPResponder: ImmediateFakeEndpoints {
    let algorithms: [String]
    let nonceRule: FakeDPoPAuthorizationServer.NonceRule
    let state: FakeDPoPAuthorizationServer.State

    func reply(to request: FakeHTTPRequest) -> FakeIdentityResponse {
        let base = state.data.withLock { $0.base }
        switch (request.method, request.path) {
        case (.GET, "/.well-known/openid-configuration"):
            return .json([
                "issuer": base, "token_endpoint": base + "/token", "authorization_endpoint": base + "/authorize",
                "device_authorization_endpoint": base + "/devicecode", "dpop_signing_alg_values_supported": algorithms,
            ])
        case (.POST, "/devicecode"):
            let code = state.data.withLock { data -> String in
                data.issued += 1
                return "dc-\(data.issued)"
            }
            return .json([
                "device_code": code, "user_code": "WDJB-MJHT", "verification_uri": base + "/device",
                "expires_in": 600, "interval": 1,
            ])
        case (.POST, "/token"):
            return token(request, uri: base + "/token")
        default:
            return .json(status: 404, ["error": "not_found"])
        }
    }

    private func token(_ request: FakeHTTPRequest, uri: String) -> FakeIdentityResponse {
        let form = request.form
        let grant = form["grant_type"] ?? ""
        let hadProof = request.headers.contains(name: "dpop")
        let proofs = request.headers["dpop"]
        return state.data.withLock { data -> FakeIdentityResponse in
            func refuse(_ status: Int, _ error: String, _ description: String, headers: [(String, String)] = [])
                -> FakeIdentityResponse
            {
                data.recorded.append(
                    .init(
                        grant: grant, status: status, error: error, description: description, accepted: nil,
                        hadProof: hadProof, proofs: proofs))
                return .json(status: status, ["error": error, "error_description": description], headers: headers)
            }
            var accepted: DPoPProofVerifier.Accepted?
            if hadProof {
                if case .rotateEveryRequest = nonceRule {
                    data.nonce.rotate()
                    return refuse(
                        400, "use_dpop_nonce", "a new nonce for every request",
                        headers: [("DPoP-Nonce", data.nonce.current)])
                }
                let demanded: String? = if case .required = nonceRule { data.nonce.current } else { nil }
                let now = Date().addingTimeInterval(data.clockSkew)
                switch data.verifier.verify(
                    request.headers, method: request.method.rawValue, uri: uri, now: now, nonce: demanded)
                {
                case .success(let proof): accepted = proof
                case .failure(let refusal) where refusal.isNonce:
                    return refuse(
                        400, "use_dpop_nonce", refusal.description, headers: [("DPoP-Nonce", data.nonce.current)])
                case .failure(let refusal):
                    return refuse(400, "invalid_dpop_proof", refusal.description)
                }
            }
            let thumbprint = accepted?.thumbprint
            var refreshToken: String?
            switch grant {
            case "client_credentials":
                break
            case "refresh_token":
                guard let presented = form["refresh_token"], let bound = data.refreshTokens[presented] else {
                    return refuse(400, "invalid_grant", "unknown or used refresh token")
                }
                // RFC 9449 §5: a public client's refresh token is bound to the key it was issued to.
                if let bound, bound != thumbprint {
                    return refuse(400, "invalid_grant", "the refresh token is bound to another DPoP key")
                }
                data.refreshTokens[presented] = nil
                refreshToken = ""
            case "urn:ietf:params:oauth:grant-type:device_code":
                refreshToken = ""
            default:
                return refuse(400, "unsupported_grant_type", "not served here")
            }
            data.issued += 1
            let number = data.issued
            var body: [String: Any] = ["expires_in": 3600, "scope": form["scope"] ?? ""]
            if let thumbprint {
                body["token_type"] = "DPoP"
                body["access_token"] = FakeIdentityJWT.mint(claims: [
                    "jti": "at-\(number)", "cnf": ["jkt": thumbprint], "scope": form["scope"] ?? "",
                ])
            } else {
                body["token_type"] = "Bearer"
                body["access_token"] = "at-\(number)"
            }
            if refreshToken != nil {
                let rotated = "rt-\(number)"
                data.refreshTokens[rotated] = .some(thumbprint)
                body["refresh_token"] = rotated
            }
            data.recorded.append(
                .init(
                    grant: grant, status: 200, error: nil, description: nil, accepted: accepted, hadProof: hadProof,
                    proofs: proofs))
            // §8.2: the server may hand out the next nonce with any answer.
            let headers: [(String, String)] = nonceRule == .never ? [] : [("DPoP-Nonce", data.nonce.current)]
            return .json(body, headers: headers)
        }
    }
}

/// Runs `body` with a fake DPoP authorization server, shutting it down afterwards whatever happens.
func withDPoPAuthorizationServer<T>(
    algorithms: [String] = ["ES256"], nonce: FakeDPoPAuthorizationServer.NonceRule = .never,
    _ body: (FakeDPoPAuthorizationServer) async throws -> T
) async throws -> T {
    try await FakeDPoPAuthorizationServer.using(
        try await FakeDPoPAuthorizationServer.start(algorithms: algorithms, nonce: nonce), body)
}
