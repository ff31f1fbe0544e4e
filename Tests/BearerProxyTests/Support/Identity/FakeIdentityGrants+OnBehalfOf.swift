import Crypto
import Foundation

/// The exchanges of a caller's token: Entra's on-behalf-of flow (`jwt-bearer` with `requested_token_use`
/// `on_behalf_of`) and RFC 8693 token exchange. Both take a confidential client only (authenticated before this
/// runs), and check the subject as the real services do: a token this provider signed, unexpired, issued to the
/// exchanging client (`aud` its id or `api://` its id), for a user. Entra answers a bad subject with `invalid_grant`;
/// RFC 8693 §2.2.2 with `invalid_request`.
extension FakeIdentityGrants {
    static let jwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    static let jwtTokenType = "urn:ietf:params:oauth:token-type:jwt"

    func onBehalfOfGrant(
        _ request: FakeIdentityTokenRequest, client: FakeIdentityProvider.Client, data: inout FakeIdentityData,
        now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        guard client.isConfidential else { return .failure(.invalidClient(700025)) }
        guard request.parameters["requested_token_use"] == "on_behalf_of" else {
            return .failure(.invalidRequest(50027, "requested_token_use must be on_behalf_of."))
        }
        guard let assertion = request.parameters["assertion"], !assertion.isEmpty else {
            return .failure(.missingParameter("assertion"))
        }
        guard let scope = request.parameters["scope"], !scope.trimmingCharacters(in: .whitespaces).isEmpty else {
            return .failure(.missingParameter("scope"))
        }
        let scopes = FakeIdentityScopes(scope)
        guard scopes.resources.count == 1 else { return .failure(.invalidRequest(28000)) }
        let subject: [String: Any]
        switch Self.subject(assertion, client: client, now: now) {
        case .success(let claims): subject = claims
        case .failure(let reason): return .failure(.invalidGrant(50013, "Assertion failed validation: \(reason)."))
        }
        if data.consentMissing.contains(scopes.resources[0]) {
            return .failure(
                .invalidGrant(
                    65001, "The user or administrator has not consented to use the application.",
                    suberror: "consent_required"))
        }
        if let challenge = data.onBehalfOfClaimsChallenge {
            var error = FakeIdentityError(
                error: "interaction_required", codes: [50076],
                message: "Due to a configuration change made by your administrator, you must use multi-factor "
                    + "authentication.")
            error.claims = challenge
            return .failure(error)
        }
        return .success(
            self.exchanged(
                subject: subject, audience: scopes.resources[0], scopes: scopes, actor: nil, client: client,
                issuer: request.issuer, data: data, now: now))
    }

    func tokenExchangeGrant(
        _ request: FakeIdentityTokenRequest, client: FakeIdentityProvider.Client, data: inout FakeIdentityData,
        now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        guard client.isConfidential else { return .failure(.invalidClient(700025)) }
        guard let token = request.parameters["subject_token"], !token.isEmpty else {
            return .failure(.missingParameter("subject_token"))
        }
        guard request.parameters["subject_token_type"] == Self.accessTokenType else {
            return .failure(.invalidRequest(9002313, "subject_token_type must be the access token type."))
        }
        let subject: [String: Any]
        switch Self.subject(token, client: client, now: now) {
        case .success(let claims): subject = claims
        case .failure(let reason): return .failure(.invalidRequest(50013, "The subject token is invalid: \(reason)."))
        }
        var actor: String?
        if let actorToken = request.parameters["actor_token"] {
            guard request.parameters["actor_token_type"] == Self.jwtTokenType,
                let claims = FakeIdentityJWT.split(actorToken)?.claims, let sub = claims["sub"] as? String
            else { return .failure(.invalidRequest(9002313, "The actor token is invalid.")) }
            actor = sub
        } else if request.parameters["actor_token_type"] != nil {
            return .failure(.invalidRequest(9002313, "actor_token_type without actor_token."))
        }
        let scopes = FakeIdentityScopes(request.parameters["scope"] ?? "")
        guard
            let audience = request.parameters["audience"] ?? request.parameters["resource"]
                ?? scopes.resources.first
        else {
            return .failure(
                FakeIdentityError(error: "invalid_target", codes: [9002313], message: "No audience, resource or scope.")
            )
        }
        if let requested = request.parameters["requested_token_type"], requested != Self.accessTokenType {
            return .failure(
                FakeIdentityError(error: "invalid_target", codes: [9002313], message: "Only access tokens are issued."))
        }
        var response = self.exchanged(
            subject: subject, audience: audience, scopes: scopes, actor: actor, client: client,
            issuer: request.issuer, data: data, now: now)
        response["issued_token_type"] = Self.accessTokenType
        response["fake_resource"] = request.parameters["resource"]
        return .success(response)
    }

    /// The token issued for `subject`'s user to `audience`, naming the exchanging client (`azp`) and the actor (RFC
    /// 8693 §4.1 `act`).
    private func exchanged(
        subject: [String: Any], audience: String, scopes: FakeIdentityScopes, actor: String?,
        client: FakeIdentityProvider.Client, issuer: String, data: FakeIdentityData, now: Date
    ) -> [String: Any] {
        let issuedAt = Int(now.timeIntervalSince1970)
        let expiresIn = data.expiresIn(for: scopes.all)
        var claims: [String: Any] = [
            "scp": scopes.permissions.joined(separator: " "), "azp": client.id, "appid": client.id, "idtyp": "user",
        ]
        for name in ["sub", "oid", "name", "preferred_username"] { claims[name] = subject[name] }
        if let actor { claims["act"] = ["sub": actor] }
        var response = self.lifetimes(expiresIn: expiresIn, refreshIn: nil)
        response["token_type"] = "Bearer"
        response["access_token"] = self.accessToken(
            audience: audience, issuer: issuer, issuedAt: issuedAt, expiresIn: expiresIn, claims: claims)
        if !scopes.resourceScopes.isEmpty { response["scope"] = scopes.resourceScopes.joined(separator: " ") }
        return response
    }

    /// The subject's claims when it is a user's token this provider signed, unexpired, whose audience is the
    /// exchanging client; else why not.
    static func subject(_ token: String, client: FakeIdentityProvider.Client, now: Date) -> Result<
        [String: Any], SubjectProblem
    > {
        guard let parts = FakeIdentityJWT.split(token), let claims = parts.claims else { return .failure(.notAJWT) }
        let mac = HMAC<SHA256>.authenticationCode(for: parts.signingInput, using: FakeIdentityJWT.signingKey)
        guard Array(mac) == parts.signature else { return .failure(.signature) }
        guard let exp = claims["exp"] as? Int, exp > Int(now.timeIntervalSince1970) else { return .failure(.expired) }
        guard let aud = claims["aud"] as? String, aud == client.id || aud == "api://\(client.id)" else {
            return .failure(.audience)
        }
        guard claims["sub"] is String, claims["idtyp"] as? String != "app" else { return .failure(.notAUser) }
        return .success(claims)
    }

    enum SubjectProblem: String, Error {
        case notAJWT = "not a JWT"
        case signature = "signature"
        case expired = "expired"
        case audience = "audience is not this client"
        case notAUser = "not a user's token"
    }
}

extension FakeIdentityProvider {
    /// A user's access token for the confidential client's API, as the caller of an on-behalf-of route holds it.
    static func callerToken(
        sub: String, client: String = Client.confidentialClientID, expiresIn: Int = 3600, now: Date = Date()
    ) -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        return FakeIdentityJWT.mint(claims: [
            "aud": "api://\(client)", "iss": "https://login.example/caller", "sub": sub, "oid": sub,
            "name": "User \(sub)", "idtyp": "user", "iat": issuedAt, "nbf": issuedAt, "exp": issuedAt + expiresIn,
            "scp": "access_as_user",
        ])
    }

    /// Makes on-behalf-of exchanges for `resource` fail as Entra does without consent (AADSTS65001).
    func setConsentMissing(_ resources: Set<String>) {
        self.state.mutate { $0.consentMissing = resources }
    }

    /// Makes every on-behalf-of exchange answer `interaction_required` with this claims challenge; nil: none.
    func setOnBehalfOfClaimsChallenge(_ claims: String?) {
        self.state.mutate { $0.onBehalfOfClaimsChallenge = claims }
    }
}
