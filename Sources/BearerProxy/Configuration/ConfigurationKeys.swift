/// Every key routes.json accepts, object by object: the lists the reader rejects unknown keys against.
///
/// One public place, so the key tables in docs/configuration.md and the JSON Schema in docs/routes.schema.json
/// can be checked against what the reader really accepts.
public enum ConfigurationKeys {
    /// The document itself. `$schema` is accepted for editors (it points them at docs/routes.schema.json) and
    /// otherwise ignored.
    public static let topLevel: Set<String> = [
        "$schema", "listen", "account", "routes", "tls", "allowedHosts", "allowedOrigins", "allowRemote",
        "requireKey",
    ]

    /// `account` for one flow, `flow` included; each flow accepts only its own keys.
    public static func account(for flow: AccountFlow) -> Set<String> { flow.keys }

    /// The keys of `account` that at least one flow accepts.
    public static var accountAnyFlow: Set<String> {
        AccountFlow.allCases.reduce(into: []) { keys, flow in keys.formUnion(flow.keys) }
    }

    /// `account.certificate` (the `client-credentials` flow).
    public static let certificate: Set<String> = ["certFile", "keyFile", "algorithm"]

    /// Each element of `routes`.
    public static let route: Set<String> = [
        "prefix", "upstream", "scopes", "auth", "token", "headers", "timeoutSeconds", "idleTimeoutSeconds", "methods",
        "allowInsecureUpstream", "forwardedHeaders", "tls",
    ]

    /// `tls`, at the top level or on a route.
    public static let tls: Set<String> = ["caFile"]

    /// A route's `headers`.
    public static let headers: Set<String> = ["set", "remove"]
}
