import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A fake resource server on 127.0.0.1 (port chosen by the OS) that takes DPoP-bound tokens only and checks every
/// request as RFC 9449 §7.1 asks, with ``DPoPProofVerifier``: `Authorization: DPoP`, exactly one `DPoP` proof whose
/// signature verifies with the header's `jwk` (no private part), `typ`, `htm`/`htu` of the request it received (the
/// URI without query), `iat` within a window, a `jti` never seen before, `ath` of the token presented, the nonce it
/// demands (§9), and the token's `cnf.jkt` equal to the proof key's thumbprint (§6.1).
///
/// A request that passes is answered `200` with its method and path; any other `401` with a `DPoP` challenge
/// (`use_dpop_nonce` with a `DPoP-Nonce`, `invalid_dpop_proof` or `invalid_token`).
final class FakeDPoPResourceServer: TestServer {
    typealias NonceRule = FakeDPoPNonces.Rule

    /// One request, as it was judged.
    struct Recorded: Sendable {
        var method: String
        var uri: String
        var authorization: String?
        /// Every `DPoP` field it carried.
        var proofs: [String]
        var body: [UInt8]
        var status: Int
        var error: String?
        var refusal: String?
        var accepted: DPoPProofVerifier.Accepted?
    }

    final class State: Sendable {
        struct Data {
            var verifier = DPoPProofVerifier()
            var nonce = FakeDPoPNonces(prefix: "rs-nonce")
            var recorded: [Recorded] = []
            var base = ""
        }

        let data = Mutex(Data())
    }

    private let state: State
    private let server: FakeEndpointServer

    private init(state: State, server: FakeEndpointServer) {
        self.state = state
        self.server = server
    }

    /// `algorithms`: the proof algorithms it takes (its challenges' `algs`, RFC 9449 §7.1).
    static func start(nonce: NonceRule = .never, algorithms: [String] = ["ES256"]) async throws
        -> FakeDPoPResourceServer
    {
        let state = State()
        state.data.withLock { $0.verifier.algorithms = Set(algorithms) }
        let server = try await FakeEndpointServer.start(
            FakeDPoPResourceResponder(nonceRule: nonce, algorithms: algorithms.joined(separator: " "), state: state))
        state.data.withLock { $0.base = "http://127.0.0.1:\(server.port)" }
        return FakeDPoPResourceServer(state: state, server: server)
    }

    func shutdown() async {
        await server.shutdown()
    }

    var port: Int { server.port }
    /// `http://127.0.0.1:<port>`.
    var baseURL: String { "http://127.0.0.1:\(server.port)" }
    var requests: [Recorded] { state.data.withLock { $0.recorded } }
    var currentNonce: String { state.data.withLock { $0.nonce.current } }

    /// A new current nonce: proofs carrying the old one are refused with `use_dpop_nonce`.
    func rotateNonce() {
        state.data.withLock { $0.nonce.rotate() }
    }
}

/// The fake's answers. Called on the connections' event loops.
private struct FakeDPoPResourceResponder: ImmediateFakeEndpoints {
    let nonceRule: FakeDPoPResourceServer.NonceRule
    /// `algs` of its challenges.
    let algorithms: String
    let state: FakeDPoPResourceServer.State

    func reply(to request: FakeHTTPRequest) -> FakeIdentityResponse {
        let authorization = request.headers.first(name: "authorization")
        return state.data.withLock { data -> FakeIdentityResponse in
            if nonceRule == .rotateEveryRequest {
                data.nonce.rotate()
            }
            var record = FakeDPoPResourceServer.Recorded(
                method: request.method.rawValue, uri: request.uri, authorization: authorization,
                proofs: request.headers["dpop"], body: request.body, status: 401)
            // §8.2: the server may hand out the next nonce with any answer.
            let nonceHeaders: [(String, String)] = nonceRule == .never ? [] : [("DPoP-Nonce", data.nonce.current)]
            func refuse(_ error: String?, _ why: String) -> FakeIdentityResponse {
                record.error = error
                record.refusal = why
                data.recorded.append(record)
                let challenge =
                    error.map { #"DPoP error="\#($0)", error_description="\#(why)", algs="\#(algorithms)""# }
                    ?? #"DPoP algs="\#(algorithms)""#
                return .json(
                    status: 401, ["error": error ?? "unauthorized", "error_description": why],
                    headers: [("WWW-Authenticate", challenge)] + (error == "use_dpop_nonce" ? nonceHeaders : []))
            }
            // §7.1: the DPoP scheme, never Bearer.
            guard let authorization, authorization.lowercased().hasPrefix("dpop ") else {
                return refuse(nil, "not a DPoP token")
            }
            let token = String(authorization.dropFirst(5))
            let demanded = nonceRule == .never ? nil : data.nonce.current
            let accepted: DPoPProofVerifier.Accepted
            switch data.verifier.verify(
                request.headers, method: request.method.rawValue, uri: data.base + request.path, now: Date(),
                nonce: demanded, accessToken: token)
            {
            case .success(let proof): accepted = proof
            case .failure(let refusal) where refusal.isNonce:
                return refuse("use_dpop_nonce", refusal.description)
            case .failure(let refusal):
                return refuse("invalid_dpop_proof", refusal.description)
            }
            // §6.1: the token is bound to the key that signed the proof.
            let confirmation = (FakeIdentityJWT.split(token)?.claims?["cnf"] as? [String: Any])?["jkt"] as? String
            guard confirmation == accepted.thumbprint else {
                return refuse("invalid_token", "the token is not bound to the proof's key")
            }
            record.status = 200
            record.accepted = accepted
            data.recorded.append(record)
            return .json(["method": request.method.rawValue, "path": request.path], headers: nonceHeaders)
        }
    }
}

/// Runs `body` with a fake DPoP resource server, shutting it down afterwards whatever happens.
func withDPoPResourceServer<T>(
    nonce: FakeDPoPResourceServer.NonceRule = .never, algorithms: [String] = ["ES256"],
    _ body: (FakeDPoPResourceServer) async throws -> T
) async throws -> T {
    try await FakeDPoPResourceServer.using(
        try await FakeDPoPResourceServer.start(nonce: nonce, algorithms: algorithms), body)
}
