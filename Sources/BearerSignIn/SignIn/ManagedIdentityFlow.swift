import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `managed-identity`: tokens from the endpoint the platform runs for its workloads — no client id, secret or
/// sign-in of the proxy's own (Azure managed identities; docs/sign-in.md).
///
/// One GET per resource: `{endpoint}?api-version=…&resource={resource}`, plus the user-assigned identity's id when
/// one is configured. A route's scope `https://x/.default` asks for `resource=https://x`. The App Service
/// protocol proves the caller with the secret `IDENTITY_HEADER` in `X-IDENTITY-HEADER`; the Instance Metadata
/// Service with `Metadata: true`, which a browser or a forwarded request cannot send (a server-side request forgery
/// guard). There is no refresh token: a token is requested again when it is due.
package struct ManagedIdentityFlow: SignInFlow {
    /// The App Service protocol's version (App Service, Functions, Container Apps).
    static let appServiceAPIVersion = "2019-08-01"
    /// The Instance Metadata Service's version that Azure's SDKs use.
    static let imdsAPIVersion = "2018-02-01"
    /// The header that carries `IDENTITY_HEADER` (App Service).
    static let identityHeaderName = "X-IDENTITY-HEADER"

    package let name = "managed-identity"
    package let account: ManagedIdentityAccount
    package let provider: IdentityProviderClient
    package let now: @Sendable () -> Date
    /// The headers of every request: `X-IDENTITY-HEADER` with the secret, or `Metadata: true`. Never printed.
    private let headers: HTTPHeaders

    /// Reads `IDENTITY_HEADER` once (a process's environment does not change; the platform sets it at start).
    package init(
        account: ManagedIdentityAccount, environment: [String: String], provider: IdentityProviderClient,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(TokenError) {
        self.account = account
        self.provider = provider
        self.now = now
        var headers: HTTPHeaders = ["accept": "application/json"]
        switch account.endpointProtocol {
        case .appService:
            let variable = ManagedIdentityAccount.headerVariable
            guard let secret = environment[variable], !secret.isEmpty else {
                throw .misconfigured(
                    reason: "environment variable \(variable) (the managed identity endpoint's secret) is not set")
            }
            headers.add(name: Self.identityHeaderName, value: secret)
        case .imds:
            headers.add(name: "Metadata", value: "true")
        }
        self.headers = headers
    }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        guard let resource = request.scopes.resource else {
            throw .misconfigured(reason: "a managed identity token is for one resource; the route names none")
        }
        let answer = ManagedIdentityAnswer(
            endpoint: account.endpoint, userAssigned: account.identity != .systemAssigned)
        let issued = now()
        let status: Int
        let answerHeaders: HTTPHeaders
        let body: Data
        do {
            (status, answerHeaders, body) = try await provider.get(
                Self.url(for: resource, account: account), headers: headers)
        } catch {
            // The client's reason names the host only; say which endpoint, never the query or the headers.
            throw .providerUnavailable(
                reason: "the managed identity endpoint \(account.endpoint): \(error.reason)",
                retryAfterSeconds: ManagedIdentityAnswer.retryAfterSeconds)
        }
        return try answer.token(status: status, headers: answerHeaders, body: body, for: request, at: issued)
    }

    /// The request URL: the protocol's version, the resource and the user-assigned identity's id, whose parameter
    /// names differ between the protocols (`mi_res_id` on App Service, `msi_res_id` on IMDS).
    package static func url(for resource: String, account: ManagedIdentityAccount) -> String {
        var query: [(String, String)]
        switch account.endpointProtocol {
        case .appService: query = [("api-version", appServiceAPIVersion), ("resource", resource)]
        case .imds: query = [("api-version", imdsAPIVersion), ("resource", resource)]
        }
        switch account.identity {
        case .systemAssigned: break
        case .clientId(let id): query.append(("client_id", id))
        case .objectId(let id): query.append(("object_id", id))
        case .resourceId(let id):
            query.append((account.endpointProtocol == .appService ? "mi_res_id" : "msi_res_id", id))
        }
        return account.endpoint + "?" + FormEncoding.encode(query)
    }
}
