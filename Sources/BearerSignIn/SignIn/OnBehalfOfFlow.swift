import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An on-behalf-of route's exchange of one caller's token (the subject) for a token to its upstream: Microsoft
/// Entra's on-behalf-of flow (the `jwt-bearer` grant with `requested_token_use=on_behalf_of`; RFC 7523 §2.1) or OAuth
/// 2.0 Token Exchange (RFC 8693 §2.1). The proxy authenticates as the account's confidential client
/// (``ClientCredentialsFlow``), so the exchanged token is issued to that client acting for the caller.
///
/// One flow per subject, made by the route's ``SubjectTokenCaches`` for the subject's own ``TokenCache``: the subject
/// is held in memory only for as long as that cache is kept, and appears in no message.
package struct OnBehalfOfFlow: SignInFlow {
    /// The `jwt-bearer` grant type (RFC 7523 §2.1), which Entra's on-behalf-of flow uses.
    static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// RFC 8693 §2.1's grant type.
    static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

    package let name = "on-behalf-of"
    /// The account's client, which authenticates the exchange.
    let client: ClientCredentialsFlow
    let settings: OnBehalfOfSettings
    /// The caller's own token.
    let subject: String
    /// Where the actor token comes from (`actorToken`), read at each exchange.
    let actor: FederatedAssertion?

    package init(
        client: ClientCredentialsFlow, settings: OnBehalfOfSettings, subject: String, environment: [String: String]
    ) throws(TokenError) {
        self.client = client
        self.settings = settings
        self.subject = subject
        actor = try settings.actorToken.map { source throws(TokenError) in
            try FederatedAssertion(source: source, environment: environment, role: "actor token")
        }
    }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let endpoints = try await client.provider.endpoints(for: client.client.endpoint)
        var form = try await parameters(for: request)
        let basic = try await client.authenticate(&form, at: endpoints)
        let issued = client.now()
        do {
            let response = try await client.provider.requestToken(
                at: endpoints.token, form: form, basicCredentials: basic)
            return response.accessToken(for: request, at: issued)
        } catch {
            switch error {
            case .unreachable(let error): throw error
            case .rejected(let failure): throw failure.exchangeError(grant: settings.grant)
            }
        }
    }

    /// The exchange's form, without the client's authentication.
    func parameters(for request: TokenRequest) async throws(TokenError) -> [(String, String)] {
        var form: [(String, String)] = [("client_id", client.client.clientId)]
        switch settings.grant {
        case .jwtBearer:
            form += [
                ("grant_type", Self.jwtBearerGrant), ("assertion", subject), ("scope", request.scopes.description),
                ("requested_token_use", "on_behalf_of"),
            ]
        case .tokenExchange:
            form += [
                ("grant_type", Self.tokenExchangeGrant), ("subject_token", subject),
                ("subject_token_type", settings.subjectTokenType),
            ]
            if let audience = settings.audience { form.append(("audience", audience)) }
            if let resource = settings.resource { form.append(("resource", resource)) }
            if !request.scopes.scopes.isEmpty { form.append(("scope", request.scopes.description)) }
            if let requested = settings.requestedTokenType { form.append(("requested_token_type", requested)) }
            if let actor {
                form.append(("actor_token", try await actor.current(now: client.now())))
                form.append(("actor_token_type", settings.actorTokenType))
            }
        }
        // The upstream's claims challenge for the exchanged token (Entra: conditional access on the downstream API).
        if let claims = ClaimsRequest.merged(
            challenge: request.claims, capabilities: client.client.clientCapabilities)
        {
            form.append(("claims", claims))
        }
        return form
    }
}
