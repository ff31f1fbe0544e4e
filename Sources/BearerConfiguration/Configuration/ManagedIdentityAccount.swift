// ManagedIdentityAccount: the `managed-identity` flow's settings, with the two endpoint protocols Azure offers its
// workloads and the constants of each (the variables, the default address, the API versions).

import BearerHTTP
import BearerJSON

/// Settings of the `managed-identity` flow: tokens from the endpoint the platform runs for its workloads, with no
/// client id, secret or sign-in of the proxy's own (Azure managed identities; docs/sign-in.md).
public struct ManagedIdentityAccount: Sendable, Hashable {
    /// Which endpoint protocol (`protocol`); the default is `app-service` when `IDENTITY_ENDPOINT` is set at load
    /// time, else `imds` — the order Azure's SDKs detect them in.
    public enum EndpointProtocol: String, Sendable, Hashable, CaseIterable {
        /// App Service, Functions, Container Apps: `IDENTITY_ENDPOINT`, a secret `IDENTITY_HEADER` sent as
        /// `X-IDENTITY-HEADER`, api-version 2019-08-01.
        case appService = "app-service"
        /// The Azure Instance Metadata Service of virtual machines and scale sets (AKS nodes included):
        /// `http://169.254.169.254/metadata/identity/oauth2/token`, `Metadata: true`, api-version 2018-02-01.
        case imds
    }

    /// Which identity of the workload the token is for.
    public enum Identity: Sendable, Hashable {
        /// The resource's own identity (no parameter sent): the default.
        case systemAssigned
        /// A user-assigned identity by its client (application) id: `clientId`.
        case clientId(String)
        /// A user-assigned identity by its object (principal) id: `objectId`.
        case objectId(String)
        /// A user-assigned identity by its Azure resource id (`/subscriptions/…/userAssignedIdentities/…`):
        /// `resourceId`.
        case resourceId(String)
    }

    /// The variable App Service (and Container Apps, Functions) sets to its endpoint's URL.
    static let endpointVariable = "IDENTITY_ENDPOINT"
    /// The variable holding the per-process secret the App Service endpoint requires in `X-IDENTITY-HEADER`.
    public static let headerVariable = "IDENTITY_HEADER"
    /// The Instance Metadata Service's token endpoint: link-local, answered by the host, never routed.
    static let imdsEndpoint = "http://169.254.169.254/metadata/identity/oauth2/token"

    public var endpointProtocol: EndpointProtocol
    /// The token endpoint's URL: `endpoint` when given, else `IDENTITY_ENDPOINT` (app-service) or
    /// ``imdsEndpoint`` (imds). https, or http to a loopback or link-local address only.
    public var endpoint: String
    /// Default ``Identity/systemAssigned``.
    public var identity: Identity

    public init(endpointProtocol: EndpointProtocol, endpoint: String, identity: Identity = .systemAssigned) {
        self.endpointProtocol = endpointProtocol
        self.endpoint = endpoint
        self.identity = identity
    }
}
