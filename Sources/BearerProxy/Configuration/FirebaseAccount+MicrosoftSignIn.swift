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
