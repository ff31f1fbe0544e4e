/// Settings of the `firebase` flow: Firebase Auth with Microsoft or email and password (docs/firebase.md §6).
public struct FirebaseAccount: Sendable, Hashable {
    /// How the user signs in to Firebase.
    public enum Provider: Sendable, Hashable {
        /// `"provider": "microsoft.com"` (the default): browser sign-in with Microsoft through Firebase.
        case microsoft(MicrosoftSignIn)
        /// `"provider": "password"`: Firebase email and password.
        case password(PasswordSignIn)
    }

    /// The name of the environment variable holding the Web API key (checked to be set at load time).
    public var apiKeyEnv: String
    public var projectId: String
    public var provider: Provider
    /// The Firebase Hosting domain, for sign-in through a hosted page; default none.
    public var authDomain: String?
    /// A Google Cloud Identity Platform tenant (not Microsoft's `tenant`); default none.
    public var gcipTenantId: String?
    /// The Auth emulator, from `emulatorHost` or `FIREBASE_AUTH_EMULATOR_HOST`; loopback only.
    public var emulatorHost: ListenAddress?
    /// Where Firebase Auth's REST paths are served instead of Google's hosts (a gateway, a test double), with
    /// production behaviour — unlike the emulator; default none.
    public var apiBaseURL: String?

    public init(
        apiKeyEnv: String,
        projectId: String,
        provider: Provider,
        authDomain: String? = nil,
        gcipTenantId: String? = nil,
        emulatorHost: ListenAddress? = nil,
        apiBaseURL: String? = nil
    ) {
        self.apiKeyEnv = apiKeyEnv
        self.projectId = projectId
        self.provider = provider
        self.authDomain = authDomain
        self.gcipTenantId = gcipTenantId
        self.emulatorHost = emulatorHost
        self.apiBaseURL = apiBaseURL
    }
}
