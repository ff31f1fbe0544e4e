extension AccountFlow {
    /// Keys every OAuth flow accepts besides `flow` (SPEC §6.2).
    static let oauthKeys: Set<String> = [
        "authority", "issuer", "clientId", "extraParameters", "clientCapabilities",
    ]

    /// The keys of `account` this flow accepts, `flow` included.
    var keys: Set<String> {
        let specific: Set<String> =
            switch self {
            case .dev: []
            // Native authentication is a Microsoft External ID API: there is no generic issuer to use.
            case .native: Self.oauthKeys.subtracting(["issuer"]).union(["username", "challenge", "passwordEnv"])
            case .deviceCode: Self.oauthKeys
            case .browser: Self.oauthKeys.union(["prompt", "loginHint", "domainHint", "redirectPort"])
            case .clientCredentials: Self.oauthKeys.union(["clientSecretEnv", "certificate", "clientAuthentication"])
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
