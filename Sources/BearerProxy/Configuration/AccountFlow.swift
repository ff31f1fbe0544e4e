/// How the account signs in (`account.flow`); see SPEC §6.2.
public enum AccountFlow: String, Sendable, Hashable, CaseIterable {
    /// The built-in local issuer: offline, nothing to configure.
    case dev
    /// Microsoft Entra External ID native authentication (username + password or one-time passcode).
    case native
    /// OAuth 2.0 device authorization grant (RFC 8628), for machines without a browser.
    case deviceCode = "device-code"
    /// Authorization code + PKCE with a loopback redirect (RFC 8252).
    case browser
    /// The app's own credentials (a secret or a certificate), for daemons and sidecars.
    case clientCredentials = "client-credentials"
    /// A refresh token obtained elsewhere.
    case refreshToken = "refresh-token"
    /// A command that prints a token (`az`, `gcloud`, `gh`).
    case command
    /// A fixed token from an environment variable.
    case staticToken = "static"
    /// Firebase Auth: Microsoft through Firebase, or email and password.
    case firebase
}
