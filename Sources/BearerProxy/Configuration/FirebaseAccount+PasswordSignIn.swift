extension FirebaseAccount {
    /// Firebase email and password sign-in.
    public struct PasswordSignIn: Sendable, Hashable {
        public var email: String
        /// The variable holding the password; when unset (or not given) it is asked for at a hidden prompt.
        public var passwordEnv: String?

        public init(email: String, passwordEnv: String? = nil) {
            self.email = email
            self.passwordEnv = passwordEnv
        }
    }
}
