import Crypto
import Foundation

/// The token endpoint's logic: validates a parsed request, authenticates the client, and issues tokens for the
/// `refresh_token` and `client_credentials` grants (Microsoft identity platform v2.0 shapes) — and, in extensions,
/// for the interactive grants (`password`/`oob` native authentication, `device_code`, `authorization_code`) and
/// their front endpoints. Runs under `FakeIdentityState`'s lock, on its data.
struct FakeIdentityGrants: Sendable {
    /// The `tid` of every token.
    let tenantID: String
    /// The registered clients by id.
    let clients: [String: FakeIdentityProvider.Client]

    init(configuration: FakeIdentityProvider.Configuration) {
        self.tenantID = configuration.tenantID
        self.clients = Dictionary(configuration.clients.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Answers `request`: the token response's JSON object, or the Entra error. Records what it learns (refresh
    /// token labels, the failed assertion check) in `record`.
    func answer(
        _ request: FakeIdentityTokenRequest, verdict: FakeIdentityAssertionVerifier.Verdict?,
        record: inout RecordedTokenRequest, data: inout FakeIdentityData, now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        if let problem = request.problem { return .failure(problem) }
        guard let grantType = request.parameters["grant_type"], !grantType.isEmpty else {
            return .failure(.missingParameter("grant_type"))
        }
        guard let clientID = request.clientID, !clientID.isEmpty else {
            return .failure(.missingParameter("client_id"))
        }
        guard let client = self.clients[clientID] else {
            return .failure(FakeIdentityError(error: "unauthorized_client", codes: [700016]))
        }
        guard Self.grantTypes.contains(grantType) else {
            return .failure(FakeIdentityError(error: "unsupported_grant_type", codes: [70003]))
        }
        if let failure = self.authenticate(client, request, verdict: verdict, record: &record, data: &data) {
            return .failure(failure)
        }
        switch grantType {
        case "refresh_token":
            return self.refresh(request, client: client, record: &record, data: &data, now: now)
        case "client_credentials":
            return self.clientCredentials(request, client: client, data: &data, now: now)
        case "password", "oob":
            return self.nativeGrant(
                request, grantType: grantType, client: client, record: &record, data: &data, now: now)
        case Self.deviceCodeGrantType:
            return self.deviceCodeGrant(request, client: client, record: &record, data: &data, now: now)
        case Self.jwtBearerGrantType:
            return self.onBehalfOfGrant(request, client: client, data: &data, now: now)
        case Self.tokenExchangeGrantType:
            return self.tokenExchangeGrant(request, client: client, data: &data, now: now)
        default:
            return self.authorizationCodeGrant(request, client: client, record: &record, data: &data, now: now)
        }
    }

    /// The `grant_type` of device-code polls (RFC 8628 §3.4).
    static let deviceCodeGrantType = "urn:ietf:params:oauth:grant-type:device_code"
    /// The `grant_type` values of native authentication.
    static let nativeGrantTypes: Set<String> = ["password", "oob"]
    /// Every `grant_type` served.
    static let grantTypes: Set<String> = [
        "refresh_token", "client_credentials", "password", "oob", deviceCodeGrantType, "authorization_code",
        jwtBearerGrantType, tokenExchangeGrantType,
    ]

    // MARK: - Client authentication

    private func authenticate(
        _ client: FakeIdentityProvider.Client, _ request: FakeIdentityTokenRequest,
        verdict: FakeIdentityAssertionVerifier.Verdict?, record: inout RecordedTokenRequest,
        data: inout FakeIdentityData
    ) -> FakeIdentityError? {
        switch request.authMethod {
        case .none, .conflicting:
            return client.isConfidential ? .invalidClient(7000218) : nil
        case .post, .basic:
            guard client.isConfidential else { return .invalidClient(700025) }
            guard let secret = client.secret, secret == request.presentedSecret else { return .invalidClient(7000215) }
            return nil
        case .assertion:
            guard client.isConfidential else { return .invalidClient(700025) }
            guard let verdict else { return .invalidClient(50027) }
            if let failure = verdict.failure {
                record.assertionFailure = failure
                return failure.entraError
            }
            if verdict.federated { return nil }
            guard let jti = verdict.jti, data.usedJTIs.insert(jti).inserted else {
                record.assertionFailure = .replayedJTI
                return FakeIdentityProvider.AssertionCheck.replayedJTI.entraError
            }
            return nil
        }
    }

    // MARK: - refresh_token

    private func refresh(
        _ request: FakeIdentityTokenRequest, client: FakeIdentityProvider.Client, record: inout RecordedTokenRequest,
        data: inout FakeIdentityData, now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        guard let raw = request.parameters["refresh_token"], !raw.isEmpty else {
            return .failure(.missingParameter("refresh_token"))
        }
        guard let scope = request.parameters["scope"], !scope.trimmingCharacters(in: .whitespaces).isEmpty else {
            return .failure(.missingParameter("scope"))
        }
        let scopes = FakeIdentityScopes(scope)
        if scopes.resources.count > 1 { return .failure(.invalidRequest(28000)) }
        if scopes.resources.isEmpty { return .failure(.invalidRequest(28003)) }
        if scopes.includesDefault && scopes.resourceScopes.count > 1 {
            return .failure(.invalidScope("The scope '.default' cannot be combined with other scopes."))
        }
        // Entra (2026): a `resource` beside the scopes must be the scopes' own resource (AADSTS9010010).
        if let resource = request.parameters["resource"], resource != scopes.resources.first {
            return .failure(.invalidRequest(9010010, "The resource parameter does not match the requested scopes."))
        }
        var requestedClaims: [String: Any]?
        if let claims = request.parameters["claims"], !claims.isEmpty {
            guard let object = FakeIdentityJWT.object(Array(claims.utf8)) else {
                return .failure(.invalidRequest(9002313, "The 'claims' parameter is not a JSON object."))
            }
            requestedClaims = object
        }

        guard var token = data.refreshTokens[raw] else {
            record.refreshTokenID = "unknown"
            return .failure(.invalidGrant(9002313, "Invalid request: the refresh token is malformed or unknown."))
        }
        record.refreshTokenID = token.id
        guard token.clientID == client.id else {
            return .failure(
                .invalidGrant(70000, "The refresh token was issued to a different client.", suberror: "client_mismatch")
            )
        }
        switch token.status {
        case .active, .superseded(remainingUses: nil):
            break
        case .superseded(let remaining?):
            guard remaining > 0 else {
                if data.supersededRefreshTokens == .invalidRevokingFamily {
                    for (other, issued) in data.refreshTokens where issued.user == token.user {
                        if issued.clientID == token.clientID { data.refreshTokens[other]?.status = .revoked }
                    }
                }
                return .failure(.invalidGrant(70000, "The refresh token was already redeemed and has been rotated."))
            }
            token.status = .superseded(remainingUses: remaining - 1)
        case .revoked:
            return .failure(.invalidGrant(700082, suberror: "bad_token"))
        }

        let issuedAt = Int(now.timeIntervalSince1970)
        let expiresIn = data.expiresIn(for: scopes.all)
        let user = token.user
        var claims: [String: Any] = [
            "scp": scopes.permissions.joined(separator: " "),
            "oid": user.oid, "sub": user.sub, "name": user.name, "preferred_username": user.preferredUsername,
            "azp": client.id, "appid": client.id, "idtyp": "user",
        ]
        if let requested = requestedClaims?["access_token"] as? [String: Any] {
            if let capabilities = Self.values(requested["xms_cc"]) { claims["xms_cc"] = capabilities }
            if let contexts = Self.values(requested["acrs"]) { claims["acrs"] = contexts }
            claims["fake_requested_claims"] = String(decoding: FakeIdentityJWT.json(requested), as: UTF8.self)
        }
        let accessToken = self.accessToken(
            audience: scopes.resources[0], issuer: request.issuer, issuedAt: issuedAt, expiresIn: expiresIn,
            claims: claims)
        let echo = scopes.resourceScopes.joined(separator: " ")
        var response = self.lifetimes(expiresIn: expiresIn, refreshIn: data.refreshIn)
        response["token_type"] = "Bearer"
        response["scope"] = echo
        response["access_token"] = accessToken

        // Microsoft's documented rule: a refresh token only when `offline_access` was requested.
        if data.rotateRefreshTokens && scopes.contains("offline_access") {
            let issued = data.issueRefreshToken(for: user, clientID: client.id, generation: token.generation + 1)
            response["refresh_token"] = issued.raw
            record.issuedRefreshTokenID = issued.id
            if token.status == .active {
                switch data.supersededRefreshTokens {
                case .remainValid: token.status = .superseded(remainingUses: nil)
                case .graceUses(let uses): token.status = .superseded(remainingUses: max(0, uses))
                case .invalid, .invalidRevokingFamily: token.status = .superseded(remainingUses: 0)
                }
            }
        }
        data.refreshTokens[raw] = token

        if scopes.contains("openid") {
            response["id_token"] = self.idToken(
                for: user, clientID: client.id, issuer: request.issuer, issuedAt: issuedAt, nonce: nil)
        }
        if request.parameters["client_info"] == "1" {
            response["client_info"] = self.clientInfo(for: user)
        }
        return .success(response)
    }

    // MARK: - client_credentials

    private func clientCredentials(
        _ request: FakeIdentityTokenRequest, client: FakeIdentityProvider.Client, data: inout FakeIdentityData,
        now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        guard let scope = request.parameters["scope"], !scope.trimmingCharacters(in: .whitespaces).isEmpty else {
            return .failure(.missingParameter("scope"))
        }
        let scopes = scope.split(separator: " ").map(String.init)
        guard scopes.count == 1, let only = scopes.first, only.hasSuffix("/.default"), only.count > "/.default".count
        else {
            return .failure(
                .invalidScope(
                    "The scope '\(scope)' is not valid: client credentials need exactly one '{resource}/.default'."))
        }
        let issuedAt = Int(now.timeIntervalSince1970)
        let expiresIn = data.expiresIn(for: scopes)
        let servicePrincipal = Self.servicePrincipalID(of: client.id)
        var claims: [String: Any] = [
            "oid": servicePrincipal, "sub": servicePrincipal, "azp": client.id, "appid": client.id, "idtyp": "app",
        ]
        if !client.roles.isEmpty { claims["roles"] = client.roles }
        var response = self.lifetimes(expiresIn: expiresIn, refreshIn: data.refreshIn)
        response["token_type"] = "Bearer"
        response["access_token"] = self.accessToken(
            audience: String(only.dropLast("/.default".count)), issuer: request.issuer, issuedAt: issuedAt,
            expiresIn: expiresIn, claims: claims)
        return .success(response)
    }

    // MARK: - Helpers

    func lifetimes(expiresIn: Int, refreshIn: Int?) -> [String: Any] {
        var response: [String: Any] = ["expires_in": expiresIn, "ext_expires_in": expiresIn]
        if let refreshIn { response["refresh_in"] = refreshIn }
        return response
    }

    func accessToken(
        audience: String, issuer: String, issuedAt: Int, expiresIn: Int, claims: [String: Any]
    ) -> String {
        var all = claims
        let id = Self.uniqueID()
        all["aud"] = audience
        all["iss"] = issuer
        all["iat"] = issuedAt
        all["nbf"] = issuedAt
        all["exp"] = issuedAt + expiresIn
        all["tid"] = self.tenantID
        all["ver"] = "2.0"
        all["jti"] = id
        all["uti"] = id
        return FakeIdentityJWT.mint(claims: all)
    }

    /// An ID token for `user` (one hour), with `nonce` verbatim if given.
    func idToken(for user: FakeIdentityProvider.User, clientID: String, issuer: String, issuedAt: Int, nonce: String?)
        -> String
    {
        var claims: [String: Any] = [
            "aud": clientID, "iss": issuer, "iat": issuedAt, "nbf": issuedAt, "exp": issuedAt + 3600,
            "name": user.name, "preferred_username": user.preferredUsername, "oid": user.oid, "sub": user.sub,
            "tid": self.tenantID, "ver": "2.0", "uti": Self.uniqueID(),
        ]
        if let nonce { claims["nonce"] = nonce }
        return FakeIdentityJWT.mint(claims: claims)
    }

    /// `client_info` for `user`: base64url of `{"uid":oid,"utid":tenant}`.
    func clientInfo(for user: FakeIdentityProvider.User) -> String {
        FakeIdentityJWT.base64URL(FakeIdentityJWT.json(["uid": user.oid, "utid": self.tenantID]))
    }

    /// `{"values": [...]}` or `{"value": "..."}` from a claims request entry.
    private static func values(_ entry: Any?) -> [String]? {
        guard let entry = entry as? [String: Any] else { return nil }
        if let values = entry["values"] as? [String] { return values }
        if let value = entry["value"] as? String { return [value] }
        return nil
    }

    /// A new random id (the `jti`/`uti` of tokens).
    static func uniqueID() -> String {
        FakeIdentityJWT.base64URL((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    /// A stable GUID-shaped object id for a client's service principal (from the SHA-256 of its id).
    static func servicePrincipalID(of clientID: String) -> String {
        let hex = Array(SHA256.hash(data: Array(clientID.utf8)).map { String(format: "%02x", $0) }.joined())
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }
        return groups.joined(separator: "-")
    }
}

/// Token revocation (RFC 7009) at the generic issuer's `revocation_endpoint`.
extension FakeIdentityGrants {
    /// `POST /oidc/revoke` (`token`, `token_type_hint`, `client_id`): revokes a refresh token the fake issued (the
    /// refresh grant then answers `invalid_grant` 700082 for it) and records the request. Anything else that is
    /// not a refresh token is accepted and ignored, as RFC 7009 §2.2 asks. Nil: HTTP 200, empty body.
    func revoke(_ form: [String: String], data: inout FakeIdentityData) -> FakeIdentityError? {
        var record = RecordedRevocation(
            tokenTypeHint: form["token_type_hint"], clientID: form["client_id"], status: 200)
        defer { data.revocations.append(record) }
        guard let token = form["token"], !token.isEmpty else {
            record.status = 400
            return .missingParameter("token")
        }
        guard let refreshToken = data.refreshTokens[token] else { return nil }
        if let clientID = form["client_id"], clientID != refreshToken.clientID {
            record.status = 400
            return FakeIdentityError(
                error: "unauthorized_client", codes: [70000], message: "The token was issued to a different client.")
        }
        data.refreshTokens[token]?.status = .revoked
        record.refreshTokenID = refreshToken.id
        return nil
    }
}
