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

/// EdDSA (Ed25519, RFC 8037) DPoP keys: chosen when a sign-in's key is made and its authorization server offers
/// `EdDSA` in `dpop_signing_alg_values_supported` (RFC 9449 §5.1), ES256 otherwise; recorded in the key file, and
/// kept while the key exists. Proofs are checked by the tests' own JOSE code (``DPoPProofVerifier``), and end to end
/// by fakes that accept only the algorithms they offer.
@Suite struct DPoPEdDSATests {
    @Test func anEd25519ProofVerifiesWithTheKeyInItsOwnHeader() throws {
        let key = DPoPKey(algorithm: .edDSA)
        let proof = key.proof(method: "POST", url: DPoPKeyTests.tokenEndpoint, at: Date())
        let (header, _, signature) = try DPoPKeyTests.parts(proof)
        #expect(header["typ"] as? String == "dpop+jwt")
        #expect(header["alg"] as? String == "EdDSA")
        #expect(Set(header.keys) == ["typ", "alg", "jwk"])
        let jwk = try #require(header["jwk"] as? [String: String])
        // RFC 8037 §2: an OKP key, the public part only.
        #expect(jwk == ["kty": "OKP", "crv": "Ed25519", "x": jwk["x"] ?? ""])
        let publicKey = try Curve25519.Signing.PublicKey(
            rawRepresentation: try #require(FakeIdentityJWT.decodeBase64URL(jwk["x"] ?? "")))
        let signingInput = proof.split(separator: ".").prefix(2).joined(separator: ".")
        #expect(signature.count == 64)
        #expect(publicKey.isValidSignature(signature, for: Array(signingInput.utf8)))
    }

    @Test func theEd25519ThumbprintIsRFC7638sOverCrvKtyAndX() throws {
        let key = DPoPKey(algorithm: .edDSA)
        let (header, _, _) = try DPoPKeyTests.parts(key.proof(method: "GET", url: "https://a/b", at: Date()))
        let x = try #require((header["jwk"] as? [String: String])?["x"])
        let canonical = #"{"crv":"Ed25519","kty":"OKP","x":"\#(x)"}"#
        #expect(key.thumbprint == FakeIdentityJWT.base64URL(SHA256.hash(data: Array(canonical.utf8))))
        #expect(key.thumbprint == DPoPProofVerifier.thumbprint(ed25519X: x))
        #expect(key.publicJWK.map(\.name) == ["crv", "kty", "x"])
    }

    @Test func theVerifierTakesOnlyTheAlgorithmsItsServerOffers() throws {
        let uri = DPoPKeyTests.tokenEndpoint
        let cases: [(offered: [String], algorithm: DPoPKey.Algorithm, accepted: Bool)] = [
            (["ES256"], .edDSA, false), (["EdDSA"], .edDSA, true), (["EdDSA"], .es256, false),
            (["ES256", "EdDSA"], .es256, true), (["ES256", "EdDSA"], .edDSA, true),
        ]
        for (offered, algorithm, accepted) in cases {
            var verifier = DPoPProofVerifier()
            verifier.algorithms = Set(offered)
            let key = DPoPKey(algorithm: algorithm)
            let headers = HTTPHeaders([("DPoP", key.proof(method: "POST", url: uri, at: Date()))])
            let result = verifier.verify(headers, method: "POST", uri: uri, now: Date(), nonce: nil)
            if accepted {
                let proof = try result.get()
                #expect(proof.thumbprint == key.thumbprint && proof.algorithm == algorithm.rawValue)
            } else {
                #expect(throws: DPoPProofVerifier.Refusal.wrongAlgorithm(algorithm.rawValue)) { try result.get() }
            }
        }
    }

    @Test func aTamperedEd25519ProofIsRefused() throws {
        let uri = DPoPKeyTests.tokenEndpoint
        var proof = Array(DPoPKey(algorithm: .edDSA).proof(method: "POST", url: uri, at: Date()).utf8)
        // A character inside the claims: the signature no longer covers them.
        let claimsStart = try #require(proof.firstIndex(of: UInt8(ascii: "."))) + 5
        proof[claimsStart] = proof[claimsStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        var verifier = DPoPProofVerifier()
        verifier.algorithms = ["EdDSA"]
        let result = verifier.verify(
            HTTPHeaders([("DPoP", String(decoding: proof, as: UTF8.self))]), method: "POST", uri: uri, now: Date(),
            nonce: nil)
        #expect(throws: DPoPProofVerifier.Refusal.self) { try result.get() }
    }

    /// Both kinds of proof, and a tampered one, past PyJWT (Tests/python/verify_dpop_proof.py): a JOSE
    /// implementation that shares no code with the proxy's, with its own RFC 7638 thumbprint.
    @Test func pyJWTVerifiesBothKindsOfProofAndTheirThumbprints() async throws {
        let uri = "https://api.example.com/v1/orders"
        let keys = [DPoPKey(algorithm: .es256), DPoPKey(algorithm: .edDSA)]
        func line(_ proof: String) throws -> String {
            let object: [String: Any] = [
                "proof": proof, "htm": "GET", "htu": uri, "algorithms": ["ES256", "EdDSA"],
            ]
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        let proofs = keys.map { $0.proof(method: "GET", url: uri + "?page=2", at: Date(), accessToken: "t") }
        let verified = try await Python.run(
            "verify_dpop_proof.py", stdin: try proofs.map(line).joined(separator: "\n") + "\n")
        #expect(verified.status == 0, "PyJWT refused a proof: \(verified.stdout) \(verified.stderr)")
        let results = verified.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(results.map { $0["alg"] as? String } == ["ES256", "EdDSA"])
        #expect(results.map { $0["jkt"] as? String } == keys.map(\.thumbprint))
        // The same library refuses an Ed25519 proof signed by another key.
        let other = DPoPKey(algorithm: .edDSA).proof(method: "GET", url: uri, at: Date())
        let forged =
            proofs[1].split(separator: ".").prefix(2).joined(separator: ".") + "."
            + (other.split(separator: ".").last.map(String.init) ?? "")
        let refused = try await Python.run("verify_dpop_proof.py", stdin: try line(forged) + "\n")
        #expect(refused.status == 1)
    }

    @Test(arguments: [
        ([], DPoPKey.Algorithm.es256), (["ES256"], .es256), (["RS256", "ES256"], .es256), (["EdDSA"], .edDSA),
        (["ES256", "EdDSA"], .edDSA), (["EdDSA", "ES256"], .edDSA), (["eddsa"], .es256),
    ])
    func aNewKeysAlgorithmIsEdDSAWhereOffered(offered: [String], expected: DPoPKey.Algorithm) {
        #expect(DPoPKey.Algorithm.preferred(offered: offered) == expected)
    }

    @Test func autoTakesDPoPFromAServerThatOffersOnlyEdDSA() {
        #expect(DPoPBinding.applies(.auto, signingAlgorithms: ["EdDSA"]))
        #expect(DPoPBinding.applies(.auto, signingAlgorithms: ["ES256"]))
        #expect(!DPoPBinding.applies(.auto, signingAlgorithms: ["RS256", "PS256"]))
    }

    @Test func theKeyFileRecordsTheAlgorithmAndRoundTrips() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let file = DPoPKeyFile(directory: scratch.state, fileName: "tokens-a.json")
        let made = try file.key(creating: .edDSA)
        #expect(made.algorithm == .edDSA)
        let text = try String(contentsOfFile: try #require(file.path), encoding: .utf8)
        let stored = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(stored["algorithm"] as? String == "EdDSA")
        // Another process reads the same key.
        let again = DPoPKeyFile(directory: scratch.state, fileName: "tokens-a.json")
        #expect(again.storedKey()?.thumbprint == made.thumbprint)
        #expect(again.storedKey()?.algorithm == .edDSA)
        #expect(again.thumbprint() == made.thumbprint)
    }

    @Test func aKeyFileWithoutAnAlgorithmHoldsAP256Key() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let key = P256.Signing.PrivateKey()
        let point = Array(key.publicKey.x963Representation)
        let thumbprint = DPoPProofVerifier.thumbprint(
            x: FakeIdentityJWT.base64URL(point[1...32]), y: FakeIdentityJWT.base64URL(point[33...64]))
        // A file as written before keys had an algorithm.
        let written =
            #"{"version":1,"privateKey":"\#(FakeIdentityJWT.base64URL(key.rawRepresentation))","#
            + #""thumbprint":"\#(thumbprint)"}"#
        try scratch.state.write(Data(written.utf8), to: "dpop-tokens-old.json")
        let file = DPoPKeyFile(directory: scratch.state, fileName: "tokens-old.json")
        // Read as ES256, and kept when the server now offers EdDSA: the sign-in's tokens are bound to it.
        let loaded = try file.key(creating: .edDSA)
        #expect(loaded.algorithm == .es256)
        #expect(loaded.thumbprint == thumbprint)
        var verifier = DPoPProofVerifier()
        let uri = DPoPKeyTests.tokenEndpoint
        let accepted = try verifier.verify(
            HTTPHeaders([("DPoP", loaded.proof(method: "POST", url: uri, at: Date()))]), method: "POST", uri: uri,
            now: Date(), nonce: nil
        ).get()
        #expect(accepted.thumbprint == thumbprint)
    }

    @Test func aStoredES256KeyIsKeptWhenTheServerNowOffersEdDSA() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let file = DPoPKeyFile(directory: scratch.state, fileName: "tokens-a.json")
        let first = try file.key(creating: .es256)
        #expect(try file.key(creating: .edDSA).thumbprint == first.thumbprint)
        // logout deletes it; the next sign-in chooses again.
        try file.remove()
        #expect(try file.key(creating: .edDSA).algorithm == .edDSA)
    }

    @Test func aKeyInMemoryIsMadeWithTheAlgorithmOfItsFirstUse() throws {
        let file = DPoPKeyFile()
        #expect(file.storedKey() == nil)
        let made = try file.key(creating: .edDSA)
        #expect(made.algorithm == .edDSA)
        #expect(try file.key(creating: .es256).thumbprint == made.thumbprint)
    }

    @Test func theDataPlaneNeverMakesAKey() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let file = DPoPKeyFile(directory: scratch.state, fileName: "tokens-a.json")
        #expect(file.proofKey(thumbprint: DPoPKey().thumbprint) == nil)
        #expect(file.storedKey() == nil, "a key made there would have an algorithm no server chose")
    }

    /// An account on an issuer that offers `offered` and a resource server that takes `resourceTakes`.
    static func endToEnd(
        offered: [String], resourceTakes: [String], tokenType: String = "dpop", expecting algorithm: String
    ) async throws {
        try await withDPoPAuthorizationServer(algorithms: offered) { authorization in
            try await withDPoPResourceServer(algorithms: resourceTakes) { resource in
                try await DPoPUpstreamTests.withProxy(authorization, resource, accountTokenType: tokenType) {
                    proxy, _ in
                    for _ in 0..<3 {
                        let response = try await TestClient.send(port: proxy.port, uri: "/r/items?page=1")
                        #expect(response.status == .ok, "\(response.bodyText)")
                    }
                }
                let tokenRequests = authorization.requests
                try #require(tokenRequests.count == 1)
                let issued = try #require(tokenRequests[0].accepted)
                #expect(issued.algorithm == algorithm)
                let received = resource.requests
                try #require(received.count == 3)
                // Every upstream proof by the key the token's cnf.jkt names (the fake checks cnf.jkt against it).
                #expect(received.allSatisfy { $0.status == 200 && $0.accepted?.algorithm == algorithm })
                #expect(received.allSatisfy { $0.accepted?.thumbprint == issued.thumbprint })
            }
        }
    }

    @Test func anIssuerThatOffersEdDSAGetsEd25519ProofsAtTheTokenEndpointAndUpstream() async throws {
        try await Self.endToEnd(offered: ["ES256", "EdDSA"], resourceTakes: ["EdDSA"], expecting: "EdDSA")
    }

    @Test func anAutoAccountOnAnIssuerThatOffersOnlyEdDSAUsesIt() async throws {
        try await Self.endToEnd(offered: ["EdDSA"], resourceTakes: ["EdDSA"], tokenType: "auto", expecting: "EdDSA")
    }

    @Test func anIssuerThatOffersOnlyES256GetsES256() async throws {
        try await Self.endToEnd(offered: ["ES256"], resourceTakes: ["ES256"], expecting: "ES256")
    }

    @Test func anIssuerThatSaysNothingGetsES256() async throws {
        try await Self.endToEnd(offered: [], resourceTakes: ["ES256"], expecting: "ES256")
    }
}
