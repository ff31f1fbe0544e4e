import Crypto
import Foundation
import NIOHTTP1
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerTokens

/// The pure parts of DPoP at the upstream (RFC 9449 §7, §9): what a `401` to a request with a proof means, which
/// `DPoP-Nonce` values are kept, what `htu` a route's proofs name, and the proof's bytes as a server reads them.
@Suite struct DPoPUpstreamRulesTests {
    static func decide(_ challenge: String?, newNonce: Bool = true, status: HTTPResponseStatus = .unauthorized)
        -> ExchangeStateMachine.TokenRetry?
    {
        var headers = HTTPHeaders()
        if let challenge { headers.add(name: "WWW-Authenticate", value: challenge) }
        return TokenVerdict.decide(
            status: status, headers: headers, route: .bearer, granted: [], proof: .sent(newNonce: newNonce)
        ).retry
    }

    @Test func aDPoPChallengeDecidesTheOneReplay() {
        #expect(Self.decide(#"DPoP error="use_dpop_nonce", algs="ES256""#) == .freshProof)
        // No new nonce in the answer: nothing new to send.
        #expect(Self.decide(#"DPoP error="use_dpop_nonce""#, newNonce: false) == nil)
        #expect(Self.decide(#"DPoP error="invalid_token""#) == .refresh)
        #expect(Self.decide(#"DPoP error="invalid_dpop_proof""#) == nil)
        #expect(Self.decide(#"DPoP algs="ES256""#) == nil)
        #expect(Self.decide(nil) == nil)
        // A Bearer challenge does not speak of a DPoP token.
        #expect(Self.decide(#"Bearer error="invalid_token""#) == nil)
        #expect(Self.decide(#"DPoP error="use_dpop_nonce""#, status: .forbidden) == nil)
        // A request without a proof reads Bearer challenges only.
        var headers = HTTPHeaders()
        headers.add(name: "WWW-Authenticate", value: #"DPoP error="use_dpop_nonce""#)
        #expect(TokenVerdict.decide(status: .unauthorized, headers: headers, route: .bearer, granted: []).retry == nil)
    }

    @Test(arguments: [
        ("eyJ7S_9-Xj.Qk~", true), ("!#$%&'()*+,-./:;<=>?@[]^_`{|}~", true), ("", false), ("a b", false),
        (#"a"b"#, false), (#"a\b"#, false), ("a\u{7F}", false), ("é", false),
        (String(repeating: "n", count: UpstreamNonce.maximumLength), true),
        (String(repeating: "n", count: UpstreamNonce.maximumLength + 1), false),
    ])
    func onlyANonceOfTheGrammarIsKept(_ value: String, _ kept: Bool) {
        #expect(UpstreamNonce.isNonce(value) == kept)
    }

    @Test func htuIsTheUpstreamsURIAsSentWithoutTheQuery() throws {
        let key = DPoPKey()
        let token = AccessToken(
            value: "t", scopes: ScopeSet(["s"]), expiresOn: Date().addingTimeInterval(3600), issuedAt: Date(),
            boundKey: key.thumbprint)
        for (upstream, remainder, htu) in [
            ("https://API.example.com/base", "/x", "https://api.example.com/base/x"),
            ("https://api.example.com:8443/base", "", "https://api.example.com:8443/base"),
            ("http://127.0.0.1:8080", "", "http://127.0.0.1:8080/"),
            ("http://127.0.0.1:80", "/a%2Fb", "http://127.0.0.1/a%2Fb"),
        ] {
            let proofs = UpstreamProofs(
                upstream: try Upstream(validating: upstream), nonce: UpstreamNonce())
            let proof = proofs.proof(method: "PATCH", remainder: remainder[...], token: token, key: key)
            var verifier = DPoPProofVerifier()
            var headers = HTTPHeaders()
            headers.add(name: "DPoP", value: String(decoding: proof, as: UTF8.self))
            let verdict = verifier.verify(headers, method: "PATCH", uri: htu, now: Date(), nonce: nil, accessToken: "t")
            #expect(throws: Never.self, "\(upstream) \(remainder)") { try verdict.get() }
        }
    }

    @Test func aBoundTokenGoesWithTheDPoPSchemeAndItsHashIsMadeOnce() {
        let bound = AccessToken(
            value: "tok", scopes: ScopeSet(["s"]), expiresOn: Date(), issuedAt: Date(), boundKey: "jkt")
        #expect(bound.authorizationHeader == "DPoP tok")
        #expect(bound.isBound)
        #expect(bound.proofHash == FakeIdentityJWT.base64URL(Array(SHA256.hash(data: Array("tok".utf8)))))
        let bearer = AccessToken(value: "tok", scopes: ScopeSet(["s"]), expiresOn: Date(), issuedAt: Date())
        #expect(bearer.authorizationHeader == "Bearer tok")
        #expect(!bearer.isBound && bearer.proofHash == nil)
    }

    @Test func base64URLAppendsWhatItEncodes() {
        var generator = SystemRandomNumberGenerator()
        for count in 0..<70 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var out: [UInt8] = []
            Base64URL.append(bytes, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == Base64URL.encode(bytes))
            #expect(out.count == Base64URL.encodedCount(count))
        }
    }
}
