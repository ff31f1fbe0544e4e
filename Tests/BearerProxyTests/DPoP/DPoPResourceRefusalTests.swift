import Foundation
import NIOHTTP1
import Testing

@testable import BearerHTTP
@testable import BearerTokens

/// Each rule RFC 9449 §7.1 gives a resource server, with a request that breaks it: ``FakeDPoPResourceServer`` refuses
/// it over a real socket, so a proxy that made that mistake would be refused too (``DPoPUpstreamTests`` shows the
/// proxy's requests pass the same checks).
@Suite struct DPoPResourceRefusalTests {
    /// What one request presents: its token, its proof's claims and key.
    struct Presented {
        var key = DPoPKey()
        var boundTo: String?
        var method = "GET"
        var htu: String?
        /// When the proof was made; nil: as it is sent. (The arguments are made when the suite is discovered, which
        /// may be longer before the test runs than the server's window for `iat`.)
        var iat: Date?
        var withHash = true
        var hashOf: String?
        var nonce: String?
        var scheme = "DPoP"
    }

    /// A token bound to `thumbprint` (§6.1), as the fake authorization server mints them.
    static func token(boundTo thumbprint: String) -> String {
        FakeIdentityJWT.mint(claims: ["jti": UUID().uuidString, "cnf": ["jkt": thumbprint]])
    }

    /// Sends `GET /base/items?q=1` to `server` as `presented` says; the answer's status and the fake's refusal.
    static func send(
        _ presented: Presented, to server: FakeDPoPResourceServer, again reused: (token: String, proof: [UInt8])? = nil
    ) async throws -> (status: HTTPResponseStatus, error: String?, token: String, proof: [UInt8]) {
        let token = reused?.token ?? token(boundTo: presented.boundTo ?? presented.key.thumbprint)
        let proof =
            reused?.proof
            ?? presented.key.proof(
                method: presented.method, htu: presented.htu ?? server.baseURL + "/base/items",
                iat: Int64((presented.iat ?? Date()).timeIntervalSince1970),
                accessTokenHash: presented.withHash ? DPoPKey.accessTokenHash(presented.hashOf ?? token) : nil,
                nonce: presented.nonce)
        let response = try await TestClient.send(
            port: server.port, uri: "/base/items?q=1",
            headers: [
                ("Authorization", "\(presented.scheme) \(token)"), ("DPoP", String(decoding: proof, as: UTF8.self)),
            ])
        return (response.status, server.requests.last?.error, token, proof)
    }

    @Test func theProxysKindOfProofIsAccepted() async throws {
        try await withDPoPResourceServer { server in
            let answer = try await Self.send(Presented(), to: server)
            #expect(answer.status == .ok)
        }
    }

    static let mistakes: [(String, Presented, String?)] = [
        ("htu with the query", Presented(htu: "QUERY"), "invalid_dpop_proof"),
        ("htu of another path", Presented(htu: "OTHER"), "invalid_dpop_proof"),
        ("htm of another method", Presented(method: "POST"), "invalid_dpop_proof"),
        ("no ath", Presented(withHash: false), "invalid_dpop_proof"),
        ("ath of another token", Presented(hashOf: "another-token"), "invalid_dpop_proof"),
        ("iat from ten minutes ago", Presented(iat: Date().addingTimeInterval(-600)), "invalid_dpop_proof"),
        ("a token bound to another key", Presented(boundTo: DPoPKey().thumbprint), "invalid_token"),
        ("the token as a bearer token", Presented(scheme: "Bearer"), nil),
    ]

    @Test(arguments: mistakes)
    func aMistakeIsRefused(_ name: String, _ presented: Presented, _ error: String?) async throws {
        try await withDPoPResourceServer { server in
            var presented = presented
            if presented.htu == "QUERY" { presented.htu = server.baseURL + "/base/items?q=1" }
            if presented.htu == "OTHER" { presented.htu = server.baseURL + "/items" }
            let answer = try await Self.send(presented, to: server)
            #expect(answer.status == .unauthorized, "\(name)")
            #expect(answer.error == error, "\(name)")
        }
    }

    @Test func aProofUsedTwiceIsRefusedTheSecondTime() async throws {
        try await withDPoPResourceServer { server in
            let presented = Presented()
            let first = try await Self.send(presented, to: server)
            #expect(first.status == .ok)
            let again = try await Self.send(presented, to: server, again: (first.token, first.proof))
            #expect(again.status == .unauthorized)
            #expect(server.requests.last?.refusal == "the jti was used before")
        }
    }

    @Test func anOldOrMissingNonceIsRefusedWithTheCurrentOne() async throws {
        try await withDPoPResourceServer(nonce: .required) { server in
            let none = try await Self.send(Presented(), to: server)
            #expect(none.status == .unauthorized)
            #expect(none.error == "use_dpop_nonce")
            let old = server.currentNonce
            server.rotateNonce()
            let stale = try await Self.send(Presented(nonce: old), to: server)
            #expect(stale.error == "use_dpop_nonce")
            let current = try await Self.send(Presented(nonce: server.currentNonce), to: server)
            #expect(current.status == .ok)
        }
    }
}
