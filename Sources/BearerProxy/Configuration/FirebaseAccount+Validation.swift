extension FirebaseAccount {
    /// The `provider` values routes.json accepts.
    enum ProviderName: String, Sendable, CaseIterable {
        case microsoft = "microsoft.com"
        case password
    }

    /// `customParameter` names Firebase sets itself and rejects (docs/firebase.md §1).
    static let reservedCustomParameters: Set<String> = [
        "client_id", "redirect_uri", "response_mode", "response_type", "scope", "state",
    ]

    /// The keys only one provider uses, for "only used with" messages.
    static let microsoftOnlyKeys: Set<String> = [
        "tenant", "prompt", "loginHint", "scopes", "redirectPort", "extraParameters",
    ]
    static let passwordOnlyKeys: Set<String> = ["email", "passwordEnv"]

    /// The environment variable the Firebase tools read for the Auth emulator.
    static let emulatorHostVariable = "FIREBASE_AUTH_EMULATOR_HOST"
}
