/// A flow in which a person signs in — `native`, `device-code`, `browser` — ending with a refresh token for the
/// account. Access tokens for the routes' scope sets then come from that refresh token (``RefreshTokenGrant``),
/// as MSAL's `getAccessToken(scopes:)` does after `signIn` (protocols.md §1.4).
public protocol InteractiveSignIn: Sendable {
    /// Whether a person must take part (type, approve, use a browser). `native` with the password in the
    /// environment does not: `serve` signs such an account in even without a terminal.
    var needsPerson: Bool { get }

    /// Signs a person in through `console`. `scopeSets` are the routes' scope sets, for flows that can ask
    /// consent to all of them at once (the browser's authorization request may span resources).
    func signIn(console: any SignInConsole, scopeSets: [ScopeSet], options: SignInOptions) async throws(SignInFailure)
        -> SignedInAccount
}

/// Choices a person makes for one sign-in (`bearer-proxy login` flags).
public struct SignInOptions: Sendable {
    /// `login --link`: when Firebase says the email already belongs to an account with another sign-in method,
    /// sign in that way and link the Microsoft sign-in to it.
    public var link: Bool

    public init(link: Bool = false) {
        self.link = link
    }
}

/// What a sign-in produced: the account's refresh token and, from the id token, who it is.
public struct SignedInAccount: Sendable {
    public var refreshToken: String
    public var identity: AccountIdentity?
    /// Tokens the sign-in itself produced for the routes (Firebase's ID token and Microsoft token); empty when
    /// every token comes from the refresh token.
    public var tokens: [AccessToken] = []

    init(refreshToken: String, identity: AccountIdentity?, tokens: [AccessToken]) {
        self.refreshToken = refreshToken
        self.identity = identity
        self.tokens = tokens
    }

    /// The account in a token response, or a failure when the provider sent no refresh token (`offline_access`
    /// not granted): without one, no token for another scope set could ever be had.
    init(_ response: TokenResponse) throws(SignInFailure) {
        guard let refreshToken = response.refreshToken, !refreshToken.isEmpty else {
            throw SignInFailure(
                .misconfigured,
                "The identity provider signed you in but returned no refresh token; allow the offline_access "
                    + "permission for the app.")
        }
        self.refreshToken = refreshToken
        identity = response.idToken.flatMap(IDToken.identity)
    }
}
