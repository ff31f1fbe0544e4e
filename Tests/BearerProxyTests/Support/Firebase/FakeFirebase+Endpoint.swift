extension FakeFirebase {
    /// The endpoints the fake serves (each recorded separately; failures are queued per endpoint).
    enum Endpoint: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `POST /identitytoolkit.googleapis.com/v1/accounts:createAuthUri` (legacy `…/v3/relyingparty/createAuthUri`).
        case createAuthUri
        /// `GET /microsoft/authorize` (the fake Microsoft sign-in page).
        case authorize
        /// `POST /identitytoolkit.googleapis.com/v1/accounts:signInWithIdp` (legacy `verifyAssertion`).
        case signInWithIdp
        /// `POST /identitytoolkit.googleapis.com/v1/accounts:signInWithPassword` (legacy `verifyPassword`).
        case signInWithPassword
        /// `POST /securetoken.googleapis.com/v1/token`.
        case secureToken

        var description: String { self.rawValue }

        /// Whether calls need the API key (every endpoint but the Microsoft page).
        var needsAPIKey: Bool { self != .authorize }
    }
}
