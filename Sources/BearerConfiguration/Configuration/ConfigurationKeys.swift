// The key lists in one place: ConfigurationKeys, and beside it the AccountFlow extension that says which keys
// each flow takes (ConfigurationKeys.account(for:) reads it).

import BearerHTTP
import BearerJSON

/// Every key routes.json accepts, object by object: the lists the reader rejects unknown keys against.
///
/// One public place, so the key tables in docs/configuration.md and the JSON Schema in docs/routes.schema.json
/// can be checked against what the reader really accepts.
enum ConfigurationKeys {
    /// The document itself. `$schema` is accepted for editors (it points them at docs/routes.schema.json) and
    /// otherwise ignored.
    static let topLevel: Set<String> = [
        "$schema", "listen", "account", "routes", "tls", "allowedHosts", "allowedOrigins", "allowRemote",
        "requireKey", "allowUsers", "requireHeader",
    ]

    /// `account` for one flow, `flow` included; each flow accepts only its own keys.
    public static func account(for flow: AccountFlow) -> Set<String> { flow.keys }

    /// The keys of `account` that at least one flow accepts.
    static var accountAnyFlow: Set<String> {
        AccountFlow.allCases.reduce(into: []) { keys, flow in keys.formUnion(flow.keys) }
    }

    /// `account.certificate` (the `client-credentials` flow).
    public static let certificate: Set<String> = ["certFile", "keyFile", "algorithm"]

    /// `account.clientAssertion` (the `client-credentials` flow): one source, and the command's time limit.
    public static let clientAssertion: Set<String> = ["file", "fileEnv", "tokenEnv", "command", "timeoutSeconds"]

    /// Each element of `routes`.
    public static let route: Set<String> = [
        "prefix", "upstream", "scopes", "auth", "token", "headers", "timeoutSeconds", "idleTimeoutSeconds", "methods",
        "allowInsecureUpstream", "forwardedHeaders", "tls", "requireHeader", "discovery", "tokenType",
        "onBehalfOf", "upstreamProtocol",
    ]

    /// An on-behalf-of route's `onBehalfOf`.
    public static let onBehalfOf: Set<String> = [
        "grant", "audience", "resource", "subjectTokenType", "requestedTokenType", "actorToken", "actorTokenType",
        "maxSubjects",
    ]

    /// A discovered route's `discovery` (SPEC §6.3).
    public static let discovery: Set<String> = [
        "clientId", "clientSecretEnv", "clientMetadataDocument", "redirectPort", "allowPrivateAddresses",
        "authorizationServer", "signIn", "stepUp",
    ]

    /// `requireHeader`, at the top level or on a route.
    public static let requireHeader: Set<String> = ["name", "value"]

    /// `tls`, at the top level or on a route.
    public static let tls: Set<String> = ["caFile"]

    /// A route's `headers`.
    public static let headers: Set<String> = ["set", "remove"]
}

extension AccountFlow {
    /// Keys every OAuth flow accepts besides `flow` (SPEC §6.2).
    static let oauthKeys: Set<String> = [
        "authority", "issuer", "clientId", "extraParameters", "clientCapabilities", "tokenType",
    ]

    /// The keys of `account` this flow accepts, `flow` included.
    var keys: Set<String> {
        let specific: Set<String> =
            switch self {
            case .dev: ["tokenType"]
            // Native authentication is a Microsoft External ID API: there is no generic issuer to use, and its
            // token endpoint issues no DPoP-bound tokens.
            case .native:
                Self.oauthKeys.subtracting(["issuer", "tokenType"]).union(["username", "challenge", "passwordEnv"])
            case .deviceCode: Self.oauthKeys
            case .browser: Self.oauthKeys.union(["prompt", "loginHint", "domainHint", "redirectPort"])
            case .clientCredentials:
                Self.oauthKeys.union([
                    "clientSecretEnv", "certificate", "clientAssertion", "clientAuthentication",
                ])
            case .managedIdentity: ["protocol", "endpoint", "clientId", "objectId", "resourceId"]
            case .refreshToken: Self.oauthKeys.union(["refreshTokenEnv"])
            case .command: ["command", "timeoutSeconds"]
            case .staticToken: ["tokenEnv"]
            case .firebase:
                [
                    "apiKeyEnv", "projectId", "provider", "tenant", "prompt", "loginHint", "scopes", "redirectPort",
                    "email", "passwordEnv", "extraParameters", "authDomain", "gcipTenantId", "emulatorHost",
                    "apiBaseURL",
                ]
            }
        return specific.union(["flow"])
    }

    /// The message for a key this flow does not take: which flows do take it, or a spelling hint.
    func unknownKeyMessage(_ key: String) -> String {
        let users = Self.allCases.filter { $0.keys.contains(key) }.map(\.rawValue)
        guard users.isEmpty else {
            return "not used by the \"\(rawValue)\" flow (only by: \(users.joined(separator: ", ")))"
        }
        return "unknown key" + SpellingSuggestion.hint(for: key, among: keys)
    }
}
