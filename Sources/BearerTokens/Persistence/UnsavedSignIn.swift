import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// The sign-in could not be written to the token cache file: a `login` whose new account, a `logout` whose deletion, or
/// a `token` whose rotated refresh token did not reach the file. The command fails rather than report a success that is
/// undone when it exits. Names the file and the system's reason, never a token.
public struct UnsavedSignIn: Error, Sendable, CustomStringConvertible {
    /// The token cache file.
    public var path: String
    /// Whether the unsaved change is a sign-out (`logout`).
    public var signedOut: Bool
    /// Why the write failed (`No space left on device`).
    public var reason: String

    public var description: String {
        if signedOut {
            return "cannot remove the account from the token cache \(path): \(reason); it is still signed in there"
        }
        return "cannot save the sign-in to the token cache \(path): \(reason). The file keeps an older refresh token, "
            + "which the identity provider may already have retired; once the cause is fixed, run: bearer-proxy login"
    }

    package init(path: String, signedOut: Bool, reason: String) {
        self.path = path
        self.signedOut = signedOut
        self.reason = reason
    }
}
