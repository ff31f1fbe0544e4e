// A discovered route's `discovery` object (#25).

import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// `discovery`: optional; every key optional.
    package func readDiscovery(_ route: ObjectReader) -> DiscoverySettings? {
        guard route.contains("discovery") else { return DiscoverySettings() }
        guard let discovery = route.object("discovery") else { return nil }
        discovery.rejectUnknownKeys(allowed: ConfigurationKeys.discovery)
        let clientID = discovery.nonEmptyString("clientId")
        // Checked to be set now, so a missing secret is found at start-up (and by `check`), not at a refresh.
        let secretEnv = readVariableName(discovery, "clientSecretEnv", required: false, mustBeSet: true)
        let document = discovery.string("clientMetadataDocument")
        let redirectPort = discovery.integer("redirectPort", in: 0...65535)
        let allowPrivate = discovery.bool("allowPrivateAddresses")
        var valid = (discovery.contains("clientId") == (clientID != nil))
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
            allowPrivateAddresses: allowPrivate ?? false)
    }

    /// A Client ID Metadata Document URL is an https URL with a path and no fragment (the client_id it becomes is
    /// compared as a string, so it must be exactly what the server fetches).
    package static func clientMetadataDocumentProblem(_ text: String) -> String? {
        let problem = "must be an https URL with a path, such as \"https://app.example.com/client.json\""
        guard let parts = try? URLParts(parsing: text), parts.scheme == "https", parts.userinfo == nil,
            parts.fragment == nil, parts.path.count > 1
        else { return problem }
        return nil
    }
}
