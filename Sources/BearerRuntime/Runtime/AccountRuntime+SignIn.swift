import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AccountRuntime {
    /// Whether a person has to sign in before tokens can be had: an interactive flow with no account yet.
    public var needsSignIn: Bool {
        interactive != nil && session.refreshToken == nil
    }

    /// Signs a person in with the account's interactive flow and records the account: the previous account and
    /// every cached token are replaced (one account per configuration). Tokens for the routes then come from the
    /// new refresh token, one request per scope set.
    public func signIn(console: any SignInConsole, options: SignInOptions = SignInOptions()) async throws(SignInFailure)
        -> AccountIdentity?
    {
        guard let interactive else {
            throw SignInFailure(.misconfigured, "The \(configuration.account.flow.rawValue) flow has no sign-in.")
        }
        let account = try await interactive.signIn(console: console, scopeSets: scopeSets, options: options)
        tokens.replaceTokens(with: account.tokens, because: .signedIn)
        session.signedIn(account)
        return account.identity
    }

    /// Gets every route's token (for `login`, after its sign-in) and returns what the person should know.
    ///
    /// A token the flow cannot renew that arrived with the sign-in already unusable (expired, or inside its margin) —
    /// Firebase's Microsoft token, when the Microsoft side hands out short-lived ones — is no reason to fail the
    /// sign-in, which worked and is stored: its routes answer 401, as they do once such a token expires.
    public func fetchRouteTokens() async throws -> [String] {
        var notes: [String] = []
        for scopes in scopeSets {
            do {
                _ = try await tokens.accessToken(for: scopes, presentedAs: .auto)
            } catch {
                guard case .signInRequired = error, FirebaseTokenKind(key: scopes) == .providerAccess else {
                    throw error
                }
                let prefixes = configuration.routes.routes.filter { $0.auth.tokenKey == scopes }.map(\.prefix)
                notes.append(
                    "The Microsoft access token from Firebase is short-lived: it could no longer be used when it "
                        + "arrived, so the provider-access routes (\(prefixes.joined(separator: ", "))) answer 401 "
                        + "until a sign-in brings a longer-lived one.")
            }
        }
        return notes
    }

    /// Runs `body` — a sign-in and the routes' first tokens, for `login` — and records what it changed in the
    /// token cache file in one write at its end (``TokenPersistence/inOneWrite(_:)``).
    public func inOneWrite<T>(_ body: () async throws -> T) async rethrows -> T {
        guard let persistence else { return try await body() }
        return try await persistence.inOneWrite(body)
    }

    /// Forgets the account here, and at the provider where the protocol allows: with a revocation endpoint
    /// (RFC 7009) the refresh token is revoked. Returns what the person should know about the provider side.
    public func signOut() async -> [String] {
        let refreshToken = session.refreshToken
        // Tokens first: the session's sign-out deletes the file, and a later token write would create it again.
        tokens.replaceTokens(with: [], because: .signedOut)
        session.signOut()
        persistence?.flush()
        // The DPoP key goes with the sign-in (whatever `tokenType` says now: an earlier configuration may have made
        // one); the next sign-in starts with a new key.
        if let persistence {
            try? DPoPKeyFile(directory: persistence.store.directory, fileName: persistence.store.fileName).remove()
        }
        if case .firebase = configuration.account.settings {
            // Revoking a Firebase refresh token takes the Admin SDK (docs/firebase.md §6); a client can only forget it.
            return ["Firebase offers clients no revocation: the refresh token was deleted here."]
        }
        guard let provider, let client = configuration.account.settings.oauthClient else { return [] }
        guard let endpoints = try? await provider.endpoints(for: client.endpoint) else {
            return ["The identity provider could not be reached; the account was forgotten here only."]
        }
        var notes: [String] = []
        if let revocation = endpoints.revocation, let refreshToken, interactive != nil || isRefreshTokenFlow {
            let form = [("token", refreshToken), ("token_type_hint", "refresh_token"), ("client_id", client.clientId)]
            if let answer = try? await provider.postForm(to: revocation, form: form), answer.status == 200 {
                notes.append("The refresh token was revoked at the identity provider.")
            } else {
                notes.append("The identity provider did not confirm revoking the refresh token.")
            }
        } else if interactive != nil {
            notes.append(
                "The identity provider offers no token revocation: the refresh token was deleted here and expires "
                    + "unused at the provider.")
        }
        if interactive != nil, let endSession = endpoints.endSession {
            notes.append("To sign out of the browser session too, open: \(endSession)")
        }
        return notes
    }

    private var isRefreshTokenFlow: Bool {
        configuration.account.flow == .refreshToken
    }
}

/// The waits of interactive sign-in: how long the browser flow waits for the redirect, and how the device flow
/// waits between polls. Tests shorten them; nothing else should.
public struct SignInTiming: Sendable {
    var browserTimeout: Duration
    var sleep: @Sendable (Duration) async throws -> Void

    public init(
        browserTimeout: Duration = .seconds(300),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.browserTimeout = browserTimeout
        self.sleep = sleep
    }
}
