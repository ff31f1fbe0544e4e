import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

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
    var link: Bool

    public init(link: Bool = false) {
        self.link = link
    }
}

extension IdentityProviderClient {
    /// The provider's endpoints, for a sign-in: a failure to find them is the sign-in's failure.
    func signInEndpoints(for endpoint: IdentityEndpoint) async throws(SignInFailure) -> ProviderEndpoints {
        do {
            return try await endpoints(for: endpoint)
        } catch {
            throw SignInFailure(error)
        }
    }
}
