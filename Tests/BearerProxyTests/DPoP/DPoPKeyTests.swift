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

/// The DPoP key and its proofs (RFC 9449 §4), checked by the tests' own JOSE code (``DPoPProofVerifier``).
@Suite struct DPoPKeyTests {
    static let tokenEndpoint = "https://as.example.com/oauth2/token"

    /// The proof's three parts, decoded by JSONSerialization.
    static func parts(_ proof: String) throws -> (header: [String: Any], claims: [String: Any], signature: [UInt8]) {
        let parts = try #require(FakeIdentityJWT.split(proof))
        return (try #require(parts.header), try #require(parts.claims), parts.signature)
    }

    @Test func aProofVerifiesWithTheKeyInItsOwnHeader() throws {
        let key = DPoPKey()
        let proof = key.proof(method: "POST", url: Self.tokenEndpoint, at: Date())
        let (header, _, signature) = try Self.parts(proof)
        let jwk = try #require(header["jwk"] as? [String: String])
        let x = try #require(FakeIdentityJWT.decodeBase64URL(jwk["x"] ?? ""))
        let y = try #require(FakeIdentityJWT.decodeBase64URL(jwk["y"] ?? ""))
        let publicKey = try P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
        let signingInput = proof.split(separator: ".").prefix(2).joined(separator: ".")
        // RFC 7518 §3.4: R || S, 64 bytes.
        #expect(signature.count == 64)
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        #expect(publicKey.isValidSignature(ecdsa, for: Array(signingInput.utf8)))
        #expect(DPoPProofVerifier.thumbprint(x: jwk["x"] ?? "", y: jwk["y"] ?? "") == key.thumbprint)
    }

    @Test func theHeaderIsTypAlgAndAPublicJWKOnly() throws {
        let (header, _, _) = try Self.parts(DPoPKey().proof(method: "GET", url: "https://a/b", at: Date()))
        #expect(header["typ"] as? String == "dpop+jwt")
        #expect(header["alg"] as? String == "ES256")
        #expect(Set(header.keys) == ["typ", "alg", "jwk"])
        let jwk = try #require(header["jwk"] as? [String: String])
        #expect(Set(jwk.keys) == ["kty", "crv", "x", "y"])
        #expect(jwk["kty"] == "EC")
        #expect(jwk["crv"] == "P-256")
        #expect(jwk["d"] == nil)
    }

    @Test func theThumbprintIsRFC7638sOfTheJWKComputedIndependently() throws {
        let key = DPoPKey()
        let (header, _, _) = try Self.parts(key.proof(method: "GET", url: "https://a/b", at: Date()))
        let jwk = try #require(header["jwk"] as? [String: String])
        // RFC 7638 §3.2 by hand: the required members in lexicographic order, no whitespace.
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk["x"]!)","y":"\#(jwk["y"]!)"}"#
        let byHand = FakeIdentityJWT.base64URL(SHA256.hash(data: Array(canonical.utf8)))
        #expect(key.thumbprint == byHand)
        #expect(key.thumbprint == DPoPProofVerifier.thumbprint(x: jwk["x"]!, y: jwk["y"]!))
        // 32 bytes of SHA-256, unpadded base64url.
        #expect(key.thumbprint.count == 43)
    }

    @Test func theClaimsAreTheRequestsWithoutQueryAndFragment() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.7)
        let proof = DPoPKey().proof(method: "POST", url: "https://as.example.com/token?x=1#frag", at: now)
        let (_, claims, _) = try Self.parts(proof)
        #expect(claims["htm"] as? String == "POST")
        #expect(claims["htu"] as? String == "https://as.example.com/token")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_800_000_000)
        #expect(claims["ath"] == nil)
        #expect(claims["nonce"] == nil)
        #expect(Set(claims.keys) == ["jti", "htm", "htu", "iat"])
        #expect(DPoPKey.targetURI("https://a/b#f") == "https://a/b")
        #expect(DPoPKey.targetURI("https://a/b") == "https://a/b")
    }

    @Test func athIsTheAccessTokensHashAndTheNonceIsCarried() throws {
        let token = "eyJ.some.token"
        let proof = DPoPKey().proof(
            method: "GET", url: "https://api/x", at: Date(), accessToken: token, nonce: "n-\"quoted\"")
        let (_, claims, _) = try Self.parts(proof)
        #expect(claims["ath"] as? String == FakeIdentityJWT.base64URL(SHA256.hash(data: Array(token.utf8))))
        #expect(claims["nonce"] as? String == "n-\"quoted\"")
    }

    @Test func everyProofHasItsOwnJTI() throws {
        let key = DPoPKey()
        var seen: Set<String> = []
        for _ in 0..<200 {
            let (_, claims, _) = try Self.parts(key.proof(method: "POST", url: Self.tokenEndpoint, at: Date()))
            seen.insert(try #require(claims["jti"] as? String))
        }
        #expect(seen.count == 200)
    }

    @Test func theKeyRoundTripsThroughItsRawRepresentation() throws {
        let key = DPoPKey()
        let again = try #require(DPoPKey(rawRepresentation: key.rawRepresentation))
        #expect(again.thumbprint == key.thumbprint)
        #expect(DPoPKey(rawRepresentation: [UInt8](repeating: 0, count: 5)) == nil)
    }

    @Test func theKeyNeverPrints() {
        let key = DPoPKey()
        let secret = FakeIdentityJWT.base64URL(key.rawRepresentation)
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(reflecting: key), dumped] {
            #expect(!text.contains(secret))
            #expect(text.contains("<redacted>"))
        }
    }

    @Test func theVerifierAcceptsTheProxysProofOnce() throws {
        let key = DPoPKey()
        var verifier = DPoPProofVerifier()
        let headers = HTTPHeaders([("DPoP", key.proof(method: "POST", url: Self.tokenEndpoint, at: Date()))])
        let first = verifier.verify(headers, method: "POST", uri: Self.tokenEndpoint, now: Date(), nonce: nil)
        #expect(try first.get().thumbprint == key.thumbprint)
        let again = verifier.verify(headers, method: "POST", uri: Self.tokenEndpoint, now: Date(), nonce: nil)
        #expect(throws: DPoPProofVerifier.Refusal.replayed) { try again.get() }
    }

    /// One core's rate, printed for docs/tokens.md; nothing is asserted about time.
    @Test func proofsSignedPerSecond() {
        let key = DPoPKey()
        let count = 2_000
        let clock = ContinuousClock()
        let start = clock.now
        var bytes = 0
        for _ in 0..<count {
            bytes +=
                key.proof(method: "GET", url: "https://api.example.com/v1/items", at: Date(), accessToken: "t")
                .utf8.count
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("DPoP proofs: \(count) in \(elapsed), \(Int(Double(count) / seconds))/s on one core, \(bytes / count) B")
        #expect(bytes > 0)
    }
}
