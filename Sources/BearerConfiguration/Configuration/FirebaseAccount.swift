// FirebaseAccount with the two sign-ins its provider can be, and the constants the reader checks them against.

import BearerHTTP
import BearerJSON

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
    var authDomain: String?
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

extension FirebaseAccount {
    /// Sign-in with Microsoft through Firebase (`createAuthUri` + `signInWithIdp`).
    public struct MicrosoftSignIn: Sendable, Hashable {
        /// Microsoft's tenant (`common`, `organizations`, `consumers`, a GUID or a domain); default none.
        public var tenant: String?
        public var prompt: SignInPrompt?
        public var loginHint: String?
        /// The Microsoft scopes asked for; `provider-access` routes use a subset. Default empty.
        public var scopes: ScopeSet
        /// The loopback port for the redirect; 0 (the default) = any free port.
        public var redirectPort: Int
        /// Passed as `customParameter`; never the six names Firebase reserves.
        public var extraParameters: [String: String]

        public init(
            tenant: String? = nil,
            prompt: SignInPrompt? = nil,
            loginHint: String? = nil,
            scopes: ScopeSet = ScopeSet([]),
            redirectPort: Int = 0,
            extraParameters: [String: String] = [:]
        ) {
            self.tenant = tenant
            self.prompt = prompt
            self.loginHint = loginHint
            self.scopes = scopes
            self.redirectPort = redirectPort
            self.extraParameters = extraParameters
        }
    }
}

extension FirebaseAccount {
    /// Firebase email and password sign-in.
    public struct PasswordSignIn: Sendable, Hashable {
        public var email: String
        /// The variable holding the password; when unset (or not given) it is asked for at a hidden prompt.
        public var passwordEnv: String?

        init(email: String, passwordEnv: String? = nil) {
            self.email = email
            self.passwordEnv = passwordEnv
        }
    }
}

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
