// The two ends of a sign-in: the account it produced, or why there is none. Both live here, below `SignIn/`,
// `Firebase/` and `Console/`, which all speak of them (a console's prompt ends in a `SignInFailure` too).

import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// What a sign-in produced: the account's refresh token and, from the id token, who it is.
public struct SignedInAccount: Sendable {
    public var refreshToken: String
    public var identity: AccountIdentity?
    /// Tokens the sign-in itself produced for the routes (Firebase's ID token and Microsoft token); empty when
    /// every token comes from the refresh token.
    public var tokens: [AccessToken] = []

    package init(refreshToken: String, identity: AccountIdentity?, tokens: [AccessToken]) {
        self.refreshToken = refreshToken
        self.identity = identity
        self.tokens = tokens
    }
}

/// Why an interactive sign-in ended without an account: one line that says what happened and what to do.
public struct SignInFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Ctrl-C, or the task was cancelled.
        case cancelled
        /// The identity provider (or the person) said no: wrong password, declined, expired code…
        case rejected
        /// The identity provider could not be reached or is failing; trying again later may work.
        case unavailable
        /// Nobody finished the sign-in in time.
        case timedOut
        /// `routes.json` or the app registration has to change before a sign-in can work.
        case misconfigured
    }

    public var kind: Kind
    /// One line for people; never holds a secret.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    public static let cancelled = SignInFailure(.cancelled, "Sign-in cancelled.")

    /// A failure to reach the identity provider, or its refusal of the configuration, during a sign-in.
    package init(_ error: TokenError) {
        switch error {
        case .providerUnavailable(let reason, _):
            self.init(.unavailable, "Sign-in cannot finish now: \(reason).")
        case .misconfigured(let reason):
            self.init(.misconfigured, "The identity provider refused the configuration: \(reason).")
        case .signInRequired(let reason), .subjectRefused(let reason, _), .consentRequired(let reason):
            self.init(.rejected, "Sign-in failed: \(reason)")
        }
    }
}
