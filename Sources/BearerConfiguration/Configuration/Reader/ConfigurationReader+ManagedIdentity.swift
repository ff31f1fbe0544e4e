// The `managed-identity` account: which endpoint protocol, where its endpoint is, and which identity.

import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// The keys naming a user-assigned identity, at most one of which may be given.
    private static let identityKeys = ["clientId", "objectId", "resourceId"]

    /// `protocol` (default: `app-service` when `IDENTITY_ENDPOINT` is set, else `imds`), `endpoint` (default:
    /// `IDENTITY_ENDPOINT`, or the instance metadata address), and at most one of `clientId`, `objectId`,
    /// `resourceId`. The App Service protocol's variables must be set now, so `check` finds a missing one; the
    /// header's value is never read here, let alone shown.
    func readManagedIdentity(_ account: ObjectReader) -> ManagedIdentityAccount? {
        typealias Account = ManagedIdentityAccount
        let identity = readManagedIdentityChoice(account)
        let endpointProtocol: Account.EndpointProtocol?
        let detected = !account.contains("protocol")
        if detected {
            endpointProtocol = (environment[Account.endpointVariable]?.isEmpty ?? true) ? .imds : .appService
        } else {
            endpointProtocol = account.choice("protocol")
        }
        let given = account.nonEmptyString("endpoint")
        var endpoint: String?
        if let given {
            endpoint = managedIdentityEndpoint(given, at: account.path("endpoint"), named: "\"endpoint\"")
        }
        // Where a problem with what the environment gives is reported: the key that chose the protocol, if any.
        let protocolPath = detected ? account.path : account.path("protocol")
        switch endpointProtocol {
        case .appService?:
            if given == nil {
                let variable = Account.endpointVariable
                if let value = environment[variable], !value.isEmpty {
                    endpoint = managedIdentityEndpoint(
                        value, at: protocolPath, named: "environment variable \(variable)")
                } else {
                    problems.report(
                        protocolPath,
                        "the app-service protocol needs environment variable \(variable) (the platform sets it) "
                            + "or \"endpoint\"")
                }
            }
            if detected, environment[Account.headerVariable]?.isEmpty ?? true {
                problems.report(
                    protocolPath,
                    "\(Account.endpointVariable) is set, so the app-service protocol is used, but environment "
                        + "variable \(Account.headerVariable) is not set (give \"protocol\": \"imds\" for the instance "
                        + "metadata service)")
            } else {
                requireVariable(Account.headerVariable, at: protocolPath)
            }
        case .imds?:
            if given == nil { endpoint = Account.imdsEndpoint }
        case nil:
            return nil
        }
        guard let endpointProtocol, let endpoint, let identity else { return nil }
        return ManagedIdentityAccount(endpointProtocol: endpointProtocol, endpoint: endpoint, identity: identity)
    }

    /// At most one of `clientId` and `objectId` (GUIDs) and `resourceId` (an Azure resource id); none: the
    /// system-assigned identity. Nil when one is invalid.
    private func readManagedIdentityChoice(_ account: ObjectReader) -> ManagedIdentityAccount.Identity? {
        let given = Self.identityKeys.filter(account.contains)
        guard given.count <= 1 else {
            problems.report(
                account.path,
                "give at most one of \"clientId\", \"objectId\" and \"resourceId\" (one user-assigned identity)")
            return nil
        }
        guard let key = given.first else { return .systemAssigned }
        guard let value = account.nonEmptyString(key) else { return nil }
        switch key {
        case "resourceId":
            guard value.lowercased().hasPrefix("/subscriptions/") else {
                account.report(
                    key,
                    "must be the identity's Azure resource id, \"/subscriptions/{subscription}/resourceGroups/"
                        + "{group}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}\"")
                return nil
            }
            return .resourceId(value)
        default:
            guard MicrosoftAuthority.isGUID(Substring(value)) else {
                account.report(key, "must be a GUID such as \"00001111-aaaa-2222-bbbb-3333cccc4444\"")
                return nil
            }
            return key == "clientId" ? .clientId(value) : .objectId(value)
        }
    }

    /// A managed identity endpoint's URL: https, or http only to a loopback or link-local address (the platform's
    /// endpoints are on the host itself: the secret header must not cross a network in clear text); no user info,
    /// query or fragment (the proxy adds the query). `named` says where the text came from, for the message.
    private func managedIdentityEndpoint(_ text: String, at path: JSONPath, named source: String) -> String? {
        guard let url = try? URLParts(parsing: text), url.scheme == "https" || url.scheme == "http",
            url.userinfo == nil, url.query == nil, url.fragment == nil
        else {
            problems.report(
                path,
                "\(source) must be an http(s) URL without a query, such as "
                    + "\"\(ManagedIdentityAccount.imdsEndpoint)\"; it is \"\(text)\"")
            return nil
        }
        let linkLocal = HostName.ipv4Octets(Substring(url.host)).map { $0[0] == 169 && $0[1] == 254 } ?? false
        guard url.scheme == "https" || url.isLoopback || linkLocal else {
            problems.report(
                path,
                "\(source) must use https (http is allowed only for loopback and link-local addresses, "
                    + "where the platform's endpoints are); it is \"\(text)\"")
            return nil
        }
        return text
    }
}
