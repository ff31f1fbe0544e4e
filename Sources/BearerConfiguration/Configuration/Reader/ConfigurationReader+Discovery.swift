// A discovered route's `discovery` object (SPEC §6.3).

import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// The account flows whose sign-in a route with `"authorizationServer": "account"` can use: an OAuth client of
    /// the account's own authorization server, with a refresh token good for any of its resources (or, for
    /// `client-credentials`, the app's own credentials).
    static let accountAuthorizationServerFlows: [AccountFlow] = [
        .native, .deviceCode, .browser, .refreshToken, .clientCredentials,
    ]

    /// `discovery`: optional; every key optional. `flow` is the account's (nil when the account is invalid).
    func readDiscovery(_ route: ObjectReader, flow: AccountFlow? = nil) -> DiscoverySettings? {
        guard route.contains("discovery") else { return DiscoverySettings() }
        guard let discovery = route.object("discovery") else { return nil }
        discovery.rejectUnknownKeys(allowed: ConfigurationKeys.discovery)
        if discovery.contains("authorizationServer") {
            return readAccountAuthorizationServer(discovery, flow: flow)
        }
        let clientID = discovery.nonEmptyString("clientId")
        // Checked to be set now, so a missing secret is found at start-up (and by `check`), not at a refresh.
        let secretEnv = readVariableName(discovery, "clientSecretEnv", required: false, mustBeSet: true)
        let document = discovery.string("clientMetadataDocument")
        let redirectPort = discovery.integer("redirectPort", in: 0...65535)
        let allowPrivate = discovery.bool("allowPrivateAddresses")
        enum SignIn: String, CaseIterable {
            case login
            case auto
        }
        let signIn: SignIn? = discovery.contains("signIn") ? discovery.choice("signIn") : .login
        enum StepUp: String, CaseIterable {
            case answer
            case auto
        }
        let stepUp: StepUp? = discovery.contains("stepUp") ? discovery.choice("stepUp") : .answer
        var valid = (discovery.contains("clientId") == (clientID != nil)) && signIn != nil && stepUp != nil
        if stepUp == .auto, signIn == .login {
            // A step-up opens a browser tab from `serve` as `"signIn": "auto"` does: the consent is asked once, there.
            discovery.report("stepUp", "\"auto\" needs \"signIn\": \"auto\" (serve then opens sign-ins itself)")
            valid = false
        }
        valid = valid && discovery.contains("clientSecretEnv") == (secretEnv != nil)
        if secretEnv != nil, !discovery.contains("clientId") {
            discovery.report(
                "clientSecretEnv", "needs \"clientId\": the secret belongs to a client registered beforehand")
            valid = false
        }
        valid = valid && discovery.contains("redirectPort") == (redirectPort != nil)
        valid = valid && discovery.contains("allowPrivateAddresses") == (allowPrivate != nil)
        if let document {
            if let problem = Self.clientMetadataDocumentProblem(document) {
                discovery.report("clientMetadataDocument", problem)
                valid = false
            } else if clientID != nil {
                // A metadata document's URL is itself the client_id: two client identities would be ambiguous.
                discovery.report("clientMetadataDocument", "use \"clientId\" or \"clientMetadataDocument\", not both")
                valid = false
            }
        } else if discovery.contains("clientMetadataDocument") {
            valid = false
        }
        guard valid else { return nil }
        return DiscoverySettings(
            clientID: clientID, clientSecretEnv: secretEnv, clientMetadataDocument: document,
            redirectPort: redirectPort ?? 0,
            allowPrivateAddresses: allowPrivate ?? false, startsSignIn: signIn == .auto, stepsUp: stepUp == .auto)
    }

    /// `"authorizationServer": "account"` (SPEC §6.3): the account's client signs in, so none of the keys that describe
    /// the route's own client or sign-in apply; the account must be an OAuth account that can use them.
    private func readAccountAuthorizationServer(_ discovery: ObjectReader, flow: AccountFlow?) -> DiscoverySettings? {
        enum Choice: String, CaseIterable { case account }
        guard let _: Choice = discovery.choice("authorizationServer") else { return nil }
        var valid = true
        for key in ["clientId", "clientSecretEnv", "clientMetadataDocument", "redirectPort", "signIn", "stepUp"]
        where discovery.contains(key) {
            discovery.report(
                key, "not used with \"authorizationServer\": \"account\" (the account's client signs in)")
            valid = false
        }
        if let flow, !Self.accountAuthorizationServerFlows.contains(flow) {
            let flows = Self.accountAuthorizationServerFlows.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            discovery.report(
                "authorizationServer",
                "\"account\" needs an account whose flow signs in at an authorization server (\(flows)); "
                    + "this account's flow is \"\(flow.rawValue)\"")
            valid = false
        }
        let allowPrivate = discovery.bool("allowPrivateAddresses")
        valid = valid && discovery.contains("allowPrivateAddresses") == (allowPrivate != nil)
        guard valid else { return nil }
        return DiscoverySettings(allowPrivateAddresses: allowPrivate ?? false, usesAccount: true)
    }

    /// A Client ID Metadata Document URL is an https URL with a path and no fragment (the client_id it becomes is
    /// compared as a string, so it must be exactly what the server fetches).
    static func clientMetadataDocumentProblem(_ text: String) -> String? {
        let problem = "must be an https URL with a path, such as \"https://app.example.com/client.json\""
        guard let parts = try? URLParts(parsing: text), parts.scheme == "https", parts.userinfo == nil,
            parts.fragment == nil, parts.path.count > 1
        else { return problem }
        return nil
    }
}
