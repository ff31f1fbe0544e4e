import Foundation

extension FakeIdentityGrants {
    /// The `scope` of an interactive grant checked like Entra does: present, at most one resource, `.default`
    /// alone. Unlike the refresh grant, OpenID Connect scopes alone are fine (the access token is then for
    /// Microsoft Graph, `scp` the OpenID Connect scopes).
    func userScopes(_ scope: String?) -> Result<FakeIdentityScopes, FakeIdentityError> {
        guard let scope, !scope.trimmingCharacters(in: .whitespaces).isEmpty else {
            return .failure(.missingParameter("scope"))
        }
        let scopes = FakeIdentityScopes(scope)
        if scopes.resources.count > 1 { return .failure(.invalidRequest(28000)) }
        if scopes.includesDefault && scopes.resourceScopes.count > 1 {
            return .failure(.invalidScope("The scope '.default' cannot be combined with other scopes."))
        }
        return .success(scopes)
    }

    /// The token response of a completed interactive sign-in (native authentication, device code, authorization
    /// code), in the refresh grant's shape: `token_type`, `scope` (the resource scopes, or the OpenID Connect ones
    /// without `offline_access` when there is no resource; `setScopeEcho` overrides apply), `expires_in`,
    /// `ext_expires_in`, `refresh_in` if set, `access_token`; a new refresh token (generation 1) for
    /// `offline_access`; an `id_token` (with `nonce`, if given) for `openid`; `client_info` if asked.
    func userTokenResponse(
        for user: FakeIdentityProvider.User, client: FakeIdentityProvider.Client, scopes: FakeIdentityScopes,
        issuer: String, clientInfo: Bool, nonce: String?, record: inout RecordedTokenRequest,
        data: inout FakeIdentityData, now: Date
    ) -> [String: Any] {
        let issuedAt = Int(now.timeIntervalSince1970)
        let expiresIn = data.expiresIn(for: scopes.all)
        let openIDScopes = scopes.all.filter { FakeIdentityScopes.openIDScopes.contains($0) && $0 != "offline_access" }
        let granted = scopes.resources.isEmpty ? openIDScopes : scopes.resourceScopes
        let permissions = scopes.resources.isEmpty ? openIDScopes : scopes.permissions
        let claims: [String: Any] = [
            "scp": permissions.joined(separator: " "),
            "oid": user.oid, "sub": user.sub, "name": user.name, "preferred_username": user.preferredUsername,
            "azp": client.id, "appid": client.id, "idtyp": "user",
        ]
        var response = self.lifetimes(expiresIn: expiresIn, refreshIn: data.refreshIn)
        response["token_type"] = "Bearer"
        response["scope"] = granted.joined(separator: " ")
        response["access_token"] = self.accessToken(
            audience: scopes.resources.first ?? FakeIdentityScopes.graphResource, issuer: issuer, issuedAt: issuedAt,
            expiresIn: expiresIn, claims: claims)
        if scopes.contains("offline_access") {
            let issued = data.issueRefreshToken(for: user, clientID: client.id, generation: 1)
            response["refresh_token"] = issued.raw
            record.issuedRefreshTokenID = issued.id
        }
        if scopes.contains("openid") {
            response["id_token"] = self.idToken(
                for: user, clientID: client.id, issuer: issuer, issuedAt: issuedAt, nonce: nonce)
        }
        if clientInfo {
            response["client_info"] = self.clientInfo(for: user)
        }
        return response
    }

    /// Whether an interactive grant asked for `client_info` (`1`, as MSAL sends it, or `true`, as the native
    /// authentication SDK does).
    static func wantsClientInfo(_ request: FakeIdentityTokenRequest) -> Bool {
        ["1", "true"].contains(request.parameters["client_info"])
    }

    /// A random value of `count` bytes, base64url, behind `prefix` (continuation tokens, device and authorization
    /// codes).
    static func randomToken(_ prefix: String, bytes count: Int = 32) -> String {
        prefix + FakeIdentityJWT.base64URL((0..<count).map { _ in UInt8.random(in: 0...255) })
    }
}
