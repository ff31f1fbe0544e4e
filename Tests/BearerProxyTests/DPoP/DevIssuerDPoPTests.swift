import Crypto
import Foundation
import NIOHTTP1
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

/// The built-in `dev` issuer with `"tokenType": "dpop"`: it checks each token request's proof as an authorization
/// server does (``DevProofCheck``) and binds the token to the proof's key (`cnf.jkt`, RFC 9449 §6.1), so DPoP works
/// offline, end to end.
@Suite struct DevIssuerDPoPTests {
    static let uri = "http://127.0.0.1:8080/-/token"

    static func issuer(tokenType: TokenTypePreference, keyFile: DPoPKeyFile = DPoPKeyFile()) -> DevIssuer {
        DevIssuer(
            issuer: "http://127.0.0.1:8080/-", key: P256.Signing.PrivateKey(),
            dpop: DPoPBinding(preference: tokenType, keyFile: keyFile, now: { Date() }))
    }

    @Test(arguments: [TokenTypePreference.dpop, .auto])
    func aTokenIsBoundToTheAccountsKey(tokenType: TokenTypePreference) async throws {
        let keyFile = DPoPKeyFile()
        let issuer = Self.issuer(tokenType: tokenType, keyFile: keyFile)
        let token = try await issuer.acquireToken(TokenRequest(scopes: ScopeSet(["api://orders/Read"])))
        let key = try #require(keyFile.storedKey())
        // The issuer offers EdDSA, so the key made for it is Ed25519.
        #expect(key.algorithm == .edDSA)
        #expect(token.boundKey == key.thumbprint)
        #expect(token.authorizationHeader.hasPrefix("DPoP "))
        let claims = try #require(FakeIdentityJWT.split(token.value)?.claims)
        #expect((claims["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
        let document = try #require(JSONObject.dictionary(issuer.discoveryDocument))
        #expect(document["dpop_signing_alg_values_supported"] as? [String] == ["ES256", "EdDSA"])
    }

    @Test func aBearerDevAccountBindsNothing() async throws {
        let issuer = DevIssuer(issuer: "http://127.0.0.1:8080/-", key: P256.Signing.PrivateKey())
        let token = try await issuer.acquireToken(TokenRequest(scopes: ScopeSet(["api://orders/Read"])))
        #expect(token.boundKey == nil)
        #expect(try #require(FakeIdentityJWT.split(token.value)?.claims)["cnf"] == nil)
        #expect(
            try #require(JSONObject.dictionary(issuer.discoveryDocument))["dpop_signing_alg_values_supported"] == nil)
    }

    @Test(arguments: [DPoPKey.Algorithm.es256, .edDSA])
    func theCheckAcceptsAProofOnceAndReturnsItsThumbprint(algorithm: DPoPKey.Algorithm) throws {
        let check = DevProofCheck()
        let key = DPoPKey(algorithm: algorithm)
        let proof = key.proof(method: "POST", url: Self.uri, at: Date())
        #expect(try check.check(proof, method: "POST", uri: Self.uri, now: Date()) == key.thumbprint)
        #expect(throws: DevProofCheck.Refusal.replayed) {
            try check.check(proof, method: "POST", uri: Self.uri, now: Date())
        }
    }

    @Test func theCheckRefusesWhatARealServerRefuses() throws {
        let check = DevProofCheck()
        let key = DPoPKey(algorithm: .edDSA)
        let now = Date()
        #expect(throws: DevProofCheck.Refusal.wrongRequest) {
            try check.check(key.proof(method: "GET", url: Self.uri, at: now), method: "POST", uri: Self.uri, now: now)
        }
        #expect(throws: DevProofCheck.Refusal.wrongRequest) {
            try check.check(
                key.proof(method: "POST", url: "http://127.0.0.1:9/-/token", at: now), method: "POST", uri: Self.uri,
                now: now)
        }
        #expect(throws: DevProofCheck.Refusal.outsideWindow) {
            try check.check(
                key.proof(method: "POST", url: Self.uri, at: now.addingTimeInterval(-300)), method: "POST",
                uri: Self.uri, now: now)
        }
        // A signature by another key over the same header and claims.
        let proof = key.proof(method: "POST", url: Self.uri, at: now)
        let other = DPoPKey(algorithm: .edDSA).proof(method: "POST", url: Self.uri, at: now)
        let forged =
            proof.split(separator: ".").prefix(2).joined(separator: ".") + "."
            + (other.split(separator: ".").last ?? "")
        #expect(throws: DevProofCheck.Refusal.badSignature) {
            try check.check(forged, method: "POST", uri: Self.uri, now: now)
        }
        // A hand-made ES256 proof whose jwk carries the private part, and one that is not a dpop+jwt.
        let p256 = P256.Signing.PrivateKey()
        let claims: [String: Any] = [
            "jti": "j-1", "htm": "POST", "htu": Self.uri, "iat": Int(now.timeIntervalSince1970),
        ]
        var jwk = DPoPProofRefusalTests.jwk(p256, withPrivatePart: true)
        #expect(throws: DevProofCheck.Refusal.badKey) {
            try check.check(
                try DPoPProofRefusalTests.handMade(
                    header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk], claims: claims, key: p256),
                method: "POST", uri: Self.uri, now: now)
        }
        jwk = DPoPProofRefusalTests.jwk(p256)
        #expect(throws: DevProofCheck.Refusal.wrongType) {
            try check.check(
                try DPoPProofRefusalTests.handMade(
                    header: ["typ": "JWT", "alg": "ES256", "jwk": jwk], claims: claims, key: p256),
                method: "POST", uri: Self.uri, now: now)
        }
        #expect(throws: DevProofCheck.Refusal.wrongAlgorithm) {
            try check.check(
                try DPoPProofRefusalTests.handMade(
                    header: ["typ": "dpop+jwt", "alg": "ES384", "jwk": jwk], claims: claims, key: p256),
                method: "POST", uri: Self.uri, now: now)
        }
        // The same hand-made proof, well formed, is accepted: the refusals above are for what they changed.
        let good = try DPoPProofRefusalTests.handMade(
            header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk], claims: claims, key: p256)
        #expect(throws: Never.self) { try check.check(good, method: "POST", uri: Self.uri, now: now) }
    }

    /// End to end: a proxy whose `dev` account asks for DPoP, forwarding to a resource server that takes only
    /// DPoP-bound tokens with EdDSA proofs and checks `cnf.jkt` against every proof's key.
    @Test func aDevAccountsDPoPRouteIsAcceptedByAStrictResourceServer() async throws {
        try await withDPoPResourceServer(nonce: .required, algorithms: ["EdDSA"]) { resource in
            let routes =
                #"[{ "prefix": "/r", "upstream": "\#(resource.baseURL)/base", "scopes": ["api://orders/Read"], "#
                + #""tokenType": "dpop" }]"#
            try await ProxyHarness.with(routes: routes, account: #"{ "flow": "dev", "tokenType": "dpop" }"#) {
                proxy in
                for _ in 0..<2 {
                    let response = try await TestClient.send(port: proxy.port, uri: "/r/items")
                    #expect(response.status == .ok, "\(response.bodyText)")
                }
                let tokens = proxy.proxy.account.tokens
                let token = try await tokens.accessToken(for: ScopeSet(["api://orders/Read"]), presentedAs: .dpop)
                let key = try #require(proxy.proxy.account.dpop?.keyFile.storedKey())
                #expect(token.boundKey == key.thumbprint)
            }
            #expect(resource.requests.map(\.status) == [401, 200, 200])
            #expect(resource.requests.allSatisfy { $0.status != 200 || $0.accepted?.algorithm == "EdDSA" })
        }
    }
}
