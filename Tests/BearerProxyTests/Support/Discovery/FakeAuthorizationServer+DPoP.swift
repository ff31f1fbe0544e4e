import Foundation
import NIOHTTP1

/// The fake's DPoP mode (RFC 9449), set with `Settings.dpop`: the metadata lists `dpop_signing_alg_values_supported`
/// (and, with ``DPoPSettings/required``, the resource's says `dpop_bound_access_tokens_required`, RFC 9728 §2);
/// `/token` and `/par` check every proof as §4.3 asks (``DPoPProofVerifier``: signature against the header's public
/// `jwk`, `typ`, `htm`, `htu`, `iat`, `jti` replay, the nonce it demands, §8); a code is bound to `dpop_jkt` or the
/// push's proof (§10, §10.1) and redeemed only with that key; a token issued to a proof is `token_type` `DPoP` with
/// `cnf.jkt` (§6.1), and its refresh token is bound to the same key (§5) — refused with another key or without a
/// proof. The resource takes a bound token only as `Authorization: DPoP` with a proof of its key and `ath` (§7).
extension FakeAuthorizationServer {
    struct DPoPSettings: Sendable {
        /// `dpop_signing_alg_values_supported`; nil: not listed (a bearer-only server).
        var algorithms: [String]?
        /// The resource accepts only DPoP-bound tokens, and says so in its metadata.
        var required = false
        /// When `/token` and `/par` demand a nonce.
        var nonce: FakeDPoPNonces.Rule = .never
    }

    /// One request whose proof was judged (or that carried none).
    struct DPoPCheck: Sendable {
        var path: String
        var hadProof: Bool
        /// The thumbprint of an accepted proof's key.
        var thumbprint: String?
        /// The error answered (`use_dpop_nonce`, `invalid_dpop_proof`, `invalid_grant`, …); nil: accepted.
        var error: String?
        /// The nonce the proof carried.
        var nonce: String?
    }

    struct DPoPRecord: Sendable {
        var verifier = DPoPProofVerifier()
        var nonce = FakeDPoPNonces(prefix: "as-nonce")
        var checks: [DPoPCheck] = []
        /// What each code, access token and refresh token is bound to (the key's thumbprint).
        var codes: [String: String] = [:]
        var accessTokens: [String: String] = [:]
        var refreshTokens: [String: String] = [:]
        /// Every proof received, for the scans of output for secrets.
        var proofs: [String] = []
    }

    var dpopChecks: [DPoPCheck] { state.record.withLock { $0.dpop.checks } }
    var dpopProofs: [String] { state.record.withLock { $0.dpop.proofs } }
    /// The thumbprint each access token issued so far is bound to.
    var boundAccessTokens: [String: String] { state.record.withLock { $0.dpop.accessTokens } }
    /// The key `refreshToken` is bound to, if any.
    func binding(ofRefreshToken refreshToken: String) -> String? {
        state.record.withLock { $0.dpop.refreshTokens[refreshToken] }
    }
}

extension FakeAuthorizationServer.Endpoints {
    /// What a request's proof came to.
    enum ProofOutcome {
        case none
        case accepted(String)
        case refused(FakeIdentityResponse)

        var thumbprint: String? {
            if case .accepted(let thumbprint) = self { return thumbprint }
            return nil
        }
    }

    /// Checks the `DPoP` proof of a request to the authorization server's `path` (RFC 9449 §4.3, nonce §8).
    static func checkProof(
        _ request: FakeHTTPRequest, origin: String, in record: inout FakeAuthorizationServer.Record
    ) -> ProofOutcome {
        let proofs = request.headers["dpop"]
        record.dpop.proofs += proofs
        func note(_ thumbprint: String?, _ error: String?, nonce: String? = nil) {
            record.dpop.checks.append(
                .init(path: request.path, hadProof: !proofs.isEmpty, thumbprint: thumbprint, error: error, nonce: nonce)
            )
        }
        guard !proofs.isEmpty else {
            note(nil, nil)
            return .none
        }
        func refuse(_ error: String, _ description: String) -> ProofOutcome {
            note(nil, error)
            let headers = error == "use_dpop_nonce" ? [("DPoP-Nonce", record.dpop.nonce.current)] : []
            return .refused(.json(status: 400, ["error": error, "error_description": description], headers: headers))
        }
        let rule = record.settings.dpop.nonce
        if rule == .rotateEveryRequest {
            record.dpop.nonce.rotate()
            return refuse("use_dpop_nonce", "a new nonce for every request")
        }
        let demanded = rule == .required ? record.dpop.nonce.current : nil
        switch record.dpop.verifier.verify(
            request.headers, method: request.method.rawValue, uri: origin + request.path, now: Date(), nonce: demanded)
        {
        case .success(let accepted):
            note(accepted.thumbprint, nil, nonce: accepted.nonce)
            return .accepted(accepted.thumbprint)
        case .failure(let refusal) where refusal.isNonce:
            return refuse("use_dpop_nonce", refusal.description)
        case .failure(let refusal):
            return refuse("invalid_dpop_proof", refusal.description)
        }
    }

    /// §8.2: every answer of a server that wants nonces carries the current one.
    static func nonceHeaders(_ record: FakeAuthorizationServer.Record) -> [(String, String)] {
        record.settings.dpop.nonce == .never ? [] : [("DPoP-Nonce", record.dpop.nonce.current)]
    }

    /// The token a request to the resource presents, with the refusal the resource answers instead when it must:
    /// a bound token as a bearer token (§7.2), a bearer token where only bound ones are taken (RFC 9728 §2), or a
    /// `DPoP` token whose proof does not verify, lacks `ath`, or is of another key than the token's `cnf.jkt`.
    static func presentedToken(
        _ request: FakeHTTPRequest, origin: String, in record: inout FakeAuthorizationServer.Record
    ) -> (token: String?, refusal: FakeIdentityResponse?) {
        let authorization = request.headers.first(name: "authorization") ?? ""
        let metadata = #"resource_metadata="\#(origin)/.well-known/oauth-protected-resource/mcp""#
        func refuse(_ description: String) -> (String?, FakeIdentityResponse?) {
            let challenge = #"DPoP error="invalid_token", algs="ES256", "# + metadata
            return (
                nil,
                .json(
                    status: 401, ["error": "invalid_token", "error_description": description],
                    headers: [("www-authenticate", challenge)])
            )
        }
        if authorization.hasPrefix("Bearer ") {
            let token = String(authorization.dropFirst(7))
            if record.dpop.accessTokens[token] != nil { return refuse("a DPoP-bound token sent as a bearer token") }
            if record.settings.dpop.required { return refuse("only DPoP-bound tokens are accepted") }
            return (token, nil)
        }
        guard authorization.hasPrefix("DPoP ") else { return (nil, nil) }
        let token = String(authorization.dropFirst(5))
        record.dpop.proofs += request.headers["dpop"]
        switch record.dpop.verifier.verify(
            request.headers, method: request.method.rawValue, uri: origin + request.path, now: Date(), nonce: nil,
            accessToken: token)
        {
        case .success(let accepted):
            guard record.dpop.accessTokens[token] == accepted.thumbprint else {
                return refuse("the proof's key is not the one the token is bound to")
            }
            record.dpop.checks.append(
                .init(path: request.path, hadProof: true, thumbprint: accepted.thumbprint, error: nil))
            return (token, nil)
        case .failure(let refusal):
            record.dpop.checks.append(.init(path: request.path, hadProof: true, error: "\(refusal)"))
            return refuse(refusal.description)
        }
    }
}
