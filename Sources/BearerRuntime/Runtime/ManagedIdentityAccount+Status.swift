import BearerConfiguration
import BearerTokens

extension ManagedIdentityAccount {
    /// How `status` names the account — the protocol, and which identity (never the endpoint's secret) — and,
    /// through the token cache file's name, which tokens are this identity's.
    var statusIdentity: AccountIdentity {
        let which: String =
            switch identity {
            case .systemAssigned: "system-assigned"
            case .clientId(let id): "user-assigned, client id \(id)"
            case .objectId(let id): "user-assigned, object id \(id)"
            case .resourceId(let id): "user-assigned, resource id \(id)"
            }
        return AccountIdentity(name: "managed identity (\(endpointProtocol.rawValue))", username: which)
    }
}
