import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Each rule RFC 9449 §4.3 gives a server, with a proof that breaks it: the fake refuses it over a real socket, so a
/// proxy making that mistake would be refused too — and the proxy's own proofs pass the same checks
/// (``DPoPTokenRequestTests``).
@Suite struct DPoPProofRefusalTests {
    /// A proof built by hand: `header` and `claims` as given, signed with `key` (the signature then flipped when
    /// `corrupt`).
    static func handMade(
        header: [String: Any], claims: [String: Any], key: P256.Signing.PrivateKey, corrupt: Bool = false
    ) throws -> String {
        let input =
            FakeIdentityJWT.base64URL(FakeIdentityJWT.json(header)) + "."
            + FakeIdentityJWT.base64URL(FakeIdentityJWT.json(claims))
        var signature = Array(try key.signature(for: Array(input.utf8)).rawRepresentation)
        if corrupt { signature[10] ^= 0xFF }
        return input + "." + FakeIdentityJWT.base64URL(signature)
    }

    static func jwk(_ key: P256.Signing.PrivateKey, withPrivatePart: Bool = false) -> [String: Any] {
        let point = Array(key.publicKey.x963Representation)
        var jwk: [String: Any] = [
            "kty": "EC", "crv": "P-256", "x": FakeIdentityJWT.base64URL(point[1...32]),
            "y": FakeIdentityJWT.base64URL(point[33...64]),
        ]
        if withPrivatePart { jwk["d"] = FakeIdentityJWT.base64URL(key.rawRepresentation) }
        return jwk
    }

    static func claims(_ url: String, method: String = "POST", iat: Date = Date(), nonce: String? = nil) -> [String:
        Any]
    {
        var claims: [String: Any] = [
            "jti": UUID().uuidString, "htm": method, "htu": url, "iat": Int(iat.timeIntervalSince1970),
        ]
        if let nonce { claims["nonce"] = nonce }
        return claims
    }

    /// Sends a client-credentials token request with `proofs` as its `DPoP` headers; the answer's status and body.
    static func send(_ proofs: [String], to server: FakeDPoPAuthorizationServer, provider: IdentityProviderClient)
        async throws -> (status: Int, error: String?, description: String?)
    {
        var request = HTTPClientRequest(url: server.tokenEndpoint)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        for proof in proofs { request.headers.add(name: "DPoP", value: proof) }
        request.body = .bytes(ByteBuffer(string: "grant_type=client_credentials&client_id=c&client_secret=s"))
        let (status, _, body) = try await provider.send(request)
        let object = JSONObject.dictionary(body) ?? [:]
        return (status, object["error"] as? String, object["error_description"] as? String)
    }

    static func withProvider<T>(_ body: (IdentityProviderClient) async throws -> T) async throws -> T {
        let provider = IdentityProviderClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger)
        do {
            let result = try await body(provider)
            try await provider.shutdown()
            return result
        } catch {
            try? await provider.shutdown()
            throw error
        }
    }

    /// A mistake, and the refusal it earns.
    struct Mistake: Sendable, CustomTestStringConvertible {
        var name: String
        var description: String
        var proof: @Sendable (_ url: String) throws -> [String]
        var testDescription: String { name }
    }

    static let key = P256.Signing.PrivateKey()
    static let typ = ["typ": "dpop+jwt", "alg": "ES256"]

    static let mistakes: [Mistake] = [
        Mistake(name: "two proofs", description: "more than one DPoP header") { url in
            [
                DPoPKey().proof(method: "POST", url: url, at: Date()),
                DPoPKey().proof(method: "POST", url: url, at: Date()),
            ]
        },
        Mistake(name: "a wrong htu", description: "htu http://127.0.0.1:1/token is not this request's URI") { _ in
            [DPoPKey().proof(method: "POST", url: "http://127.0.0.1:1/token", at: Date())]
        },
        Mistake(name: "a wrong htm", description: "htm GET is not this request's method") { url in
            [DPoPKey().proof(method: "GET", url: url, at: Date())]
        },
        Mistake(name: "an old iat", description: "iat is outside the accepted window") { url in
            [DPoPKey().proof(method: "POST", url: url, at: Date().addingTimeInterval(-600))]
        },
        Mistake(name: "a private key in the header", description: "the jwk holds a private key") { url in
            var header: [String: Any] = typ
            header["jwk"] = jwk(key, withPrivatePart: true)
            return [try handMade(header: header, claims: claims(url), key: key)]
        },
        Mistake(name: "typ JWT", description: "typ is JWT, not dpop+jwt") { url in
            let header: [String: Any] = ["typ": "JWT", "alg": "ES256", "jwk": jwk(key)]
            return [try handMade(header: header, claims: claims(url), key: key)]
        },
        Mistake(name: "alg none", description: "alg none is not an accepted asymmetric algorithm") { url in
            let header: [String: Any] = ["typ": "dpop+jwt", "alg": "none", "jwk": jwk(key)]
            return [try handMade(header: header, claims: claims(url), key: key)]
        },
        Mistake(name: "signed by another key", description: "the signature does not verify with the header's jwk") {
            url in
            var header: [String: Any] = typ
            header["jwk"] = jwk(P256.Signing.PrivateKey())
            return [try handMade(header: header, claims: claims(url), key: key)]
        },
        Mistake(name: "a broken signature", description: "the signature does not verify with the header's jwk") {
            url in
            var header: [String: Any] = typ
            header["jwk"] = jwk(key)
            return [try handMade(header: header, claims: claims(url), key: key, corrupt: true)]
        },
        Mistake(name: "no jti", description: "the jti claim is missing") { url in
            var header: [String: Any] = typ
            header["jwk"] = jwk(key)
            var claims = claims(url)
            claims["jti"] = nil
            return [try handMade(header: header, claims: claims, key: key)]
        },
    ]

    @Test(arguments: mistakes)
    func theServerRefuses(_ mistake: Mistake) async throws {
        try await Self.withProvider { provider in
            try await withDPoPAuthorizationServer { server in
                let answer = try await Self.send(
                    try mistake.proof(server.tokenEndpoint), to: server, provider: provider)
                #expect(answer.status == 400)
                #expect(answer.error == "invalid_dpop_proof")
                #expect(answer.description == mistake.description)
            }
        }
    }

    @Test func aProofUsedTwiceIsRefusedTheSecondTime() async throws {
        try await Self.withProvider { provider in
            try await withDPoPAuthorizationServer { server in
                let proof = DPoPKey().proof(method: "POST", url: server.tokenEndpoint, at: Date())
                #expect(try await Self.send([proof], to: server, provider: provider).status == 200)
                let again = try await Self.send([proof], to: server, provider: provider)
                #expect(again.status == 400)
                #expect(again.description == "the jti was used before")
            }
        }
    }

    @Test(arguments: [nil, "nonce-0"])
    func aMissingOrOldNonceEarnsUseDPoPNonce(sent: String?) async throws {
        try await Self.withProvider { provider in
            try await withDPoPAuthorizationServer(nonce: .required) { server in
                let proof = DPoPKey().proof(method: "POST", url: server.tokenEndpoint, at: Date(), nonce: sent)
                let answer = try await Self.send([proof], to: server, provider: provider)
                #expect(answer.status == 400)
                #expect(answer.error == "use_dpop_nonce")
                let current = DPoPKey().proof(
                    method: "POST", url: server.tokenEndpoint, at: Date(), nonce: server.currentNonce)
                #expect(try await Self.send([current], to: server, provider: provider).status == 200)
            }
        }
    }

    @Test func aBoundRefreshTokenIsRefusedWithAnotherKey() async throws {
        try await Self.withProvider { provider in
            try await withDPoPAuthorizationServer { server in
                let owner = DPoPKey()
                let refreshToken = server.issueRefreshToken(boundTo: owner.thumbprint)
                let thief = DPoPKey()
                for (key, status) in [(thief, 400), (owner, 200)] {
                    var request = HTTPClientRequest(url: server.tokenEndpoint)
                    request.method = .POST
                    request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
                    request.headers.add(
                        name: "DPoP", value: key.proof(method: "POST", url: server.tokenEndpoint, at: Date()))
                    request.body = .bytes(
                        ByteBuffer(string: "grant_type=refresh_token&client_id=c&refresh_token=\(refreshToken)"))
                    let (answered, _, _) = try await provider.send(request)
                    #expect(answered == status)
                }
            }
        }
    }
}
