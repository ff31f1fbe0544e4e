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

/// `client-credentials`: the application signs in as itself with a secret, a certificate or an assertion the
/// platform issues (RFC 6749 §4.4; RFC 7523 §2.2; protocols.md §5). Each scope set is one `{resource}/.default`
/// request; there is no refresh token, so a token is simply requested again when it is due.
package struct ClientCredentialsFlow: SignInFlow {
    enum Credential: Sendable {
        case secret(String, method: ClientCredentialsAccount.SecretMethod)
        case certificate(ClientCertificate, algorithm: ClientCredentialsAccount.AssertionAlgorithm)
        case federated(FederatedAssertion)
    }

    /// `client_assertion_type` for a JWT (RFC 7523 §2.2).
    static let jwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    package let name = "client-credentials"
    package let client: OAuthClient
    let credential: Credential
    package let provider: IdentityProviderClient
    package let now: @Sendable () -> Date
    /// The account's DPoP binding (RFC 9449), when its `tokenType` is not `bearer`.
    package let dpop: DPoPBinding?

    /// Builds the flow from its configuration, reading the secret or the certificate once (a platform's assertion is
    /// read at each token request instead).
    package init(
        account: ClientCredentialsAccount, environment: [String: String], provider: IdentityProviderClient,
        dpop: DPoPBinding? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) throws(TokenError) {
        client = account.client
        switch account.credential {
        case .secretEnv(let variable):
            guard let secret = environment[variable], !secret.isEmpty else {
                throw .misconfigured(reason: "environment variable \(variable) (the client secret) is not set")
            }
            credential = .secret(secret, method: account.secretMethod)
        case .certificate(let certFile, let keyFile):
            credential = .certificate(
                try ClientCertificate(certFile: certFile, keyFile: keyFile), algorithm: account.assertionAlgorithm)
        case .clientAssertion(let source):
            credential = .federated(try FederatedAssertion(source: source, environment: environment))
        }
        self.provider = provider
        self.dpop = dpop
        self.now = now
    }

    /// Adds the client's authentication (RFC 6749 §2.3; RFC 7523 §2.2) to a token request's `form` for `endpoints`:
    /// the secret or an assertion in the form, or the credentials for HTTP Basic, returned. Shared with the exchanges
    /// of on-behalf-of routes (``OnBehalfOfFlow``), which authenticate as this same client.
    func authenticate(
        _ form: inout [(String, String)], at endpoints: ProviderEndpoints
    ) async throws(TokenError) -> (id: String, secret: String)? {
        switch credential {
        case .secret(let secret, .post):
            form.append(("client_secret", secret))
            return nil
        case .secret(let secret, .basic):
            return (client.clientId, secret)
        case .certificate(let certificate, let algorithm):
            form.append(("client_assertion_type", Self.jwtBearer))
            form.append(
                (
                    "client_assertion",
                    try certificate.assertion(
                        clientID: client.clientId, tokenEndpoint: endpoints.token, algorithm: algorithm, now: now())
                ))
            return nil
        case .federated(let assertion):
            form.append(("client_assertion_type", Self.jwtBearer))
            form.append(("client_assertion", try await assertion.current(now: now())))
            return nil
        }
    }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let endpoints = try await provider.endpoints(for: client.endpoint)
        var form: [(String, String)] = [
            ("client_id", client.clientId), ("scope", request.scopes.description),
            ("grant_type", "client_credentials"),
        ]
        let basic = try await authenticate(&form, at: endpoints)
        if let claims = ClaimsRequest.merged(challenge: request.claims, capabilities: client.clientCapabilities) {
            form.append(("claims", claims))
        }
        form += client.extraParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        // A discovered route of the account's own authorization server (SPEC §6.3); the account's own wins.
        if let resource = request.resource, client.extraParameters["resource"] == nil {
            form.append(("resource", resource))
        }
        let issued = now()
        do {
            let response = try await provider.requestToken(
                at: endpoints.token, form: form, basicCredentials: basic, dpop: dpop?.ifApplies(to: endpoints))
            return response.accessToken(for: request, at: issued)
        } catch {
            throw error.tokenError
        }
    }
}
