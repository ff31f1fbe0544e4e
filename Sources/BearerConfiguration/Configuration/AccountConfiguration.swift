// The account and its settings: AccountConfiguration (what Configuration holds), AccountFlow, AccountSettings
// (one case per flow) and the value each case carries: OAuthClient with its IdentityEndpoint, NativeAccount,
// BrowserAccount, ClientCredentialsAccount, RefreshTokenAccount, CommandAccount, StaticTokenAccount, and
// SignInPrompt. They are plain values that exist only as parts of `account`, most a few lines long, so they are
// read together here; FirebaseAccount and ManagedIdentityAccount, with their own types, have their own files.
// Reading them: Reader/.

import BearerHTTP
import BearerJSON

/// The one account a configuration signs in with: its flow and that flow's validated settings.
public struct AccountConfiguration: Sendable, Hashable {
    /// One case per flow, so a flow's settings can only be what that flow needs.
    public var settings: AccountSettings

    /// The flow, derived from `settings` so the two can never disagree.
    public var flow: AccountFlow { settings.flow }

    init(_ settings: AccountSettings) {
        self.settings = settings
    }

    /// The embedded default: the built-in offline issuer.
    public static let dev = AccountConfiguration(.dev())
}

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
    /// The app's own credentials (a secret, a certificate or a platform-issued assertion), for daemons and sidecars.
    case clientCredentials = "client-credentials"
    /// Tokens from the platform's managed identity endpoint (Azure App Service, Container Apps, virtual machines).
    case managedIdentity = "managed-identity"
    /// A refresh token obtained elsewhere.
    case refreshToken = "refresh-token"
    /// A command that prints a token (`az`, `gcloud`, `gh`).
    case command
    /// A fixed token from an environment variable.
    case staticToken = "static"
    /// Firebase Auth: Microsoft through Firebase, or email and password.
    case firebase
}

/// A flow's validated settings; each case carries exactly what its flow needs (SPEC §6.2).
public enum AccountSettings: Sendable, Hashable {
    /// The built-in issuer, minting bearer tokens or, with `tokenType` `dpop` (or `auto`: it offers DPoP), DPoP-bound
    /// ones (RFC 9449).
    case dev(tokenType: TokenTypePreference = .bearer)
    case native(NativeAccount)
    case deviceCode(OAuthClient)
    case browser(BrowserAccount)
    case clientCredentials(ClientCredentialsAccount)
    case managedIdentity(ManagedIdentityAccount)
    case refreshToken(RefreshTokenAccount)
    case command(CommandAccount)
    case staticToken(StaticTokenAccount)
    case firebase(FirebaseAccount)

    public var flow: AccountFlow {
        switch self {
        case .dev: .dev
        case .native: .native
        case .deviceCode: .deviceCode
        case .browser: .browser
        case .clientCredentials: .clientCredentials
        case .managedIdentity: .managedIdentity
        case .refreshToken: .refreshToken
        case .command: .command
        case .staticToken: .staticToken
        case .firebase: .firebase
        }
    }
}

extension AccountSettings {
    /// The OAuth client of the flows that have one.
    package var oauthClient: OAuthClient? {
        switch self {
        case .native(let account): account.client
        case .deviceCode(let client): client
        case .browser(let account): account.client
        case .clientCredentials(let account): account.client
        case .refreshToken(let account): account.client
        case .dev, .managedIdentity, .command, .staticToken, .firebase: nil
        }
    }

    /// `tokenType` of the flows that can ask for DPoP-bound tokens (RFC 9449): the OAuth flows' and `dev`'s; nil for
    /// the others, whose tokens are bearer tokens.
    package var tokenType: TokenTypePreference? {
        if case .dev(let tokenType) = self { return tokenType }
        return oauthClient?.tokenType
    }
}

/// The settings every OAuth flow shares: where to sign in and as which client application.
public struct OAuthClient: Sendable, Hashable {
    public var endpoint: IdentityEndpoint
    public var clientId: String
    /// Added to authorization and token requests (e.g. `resource`, `audience`); default none.
    public var extraParameters: [String: String]
    /// Sent as the `xms_cc` claims request (e.g. `["cp1"]` for continuous access evaluation); default none.
    public var clientCapabilities: [String]
    /// Bearer or DPoP-bound tokens (`tokenType`); default `.bearer`.
    public var tokenType: TokenTypePreference

    public init(
        endpoint: IdentityEndpoint,
        clientId: String,
        extraParameters: [String: String] = [:],
        clientCapabilities: [String] = [],
        tokenType: TokenTypePreference = .bearer
    ) {
        self.endpoint = endpoint
        self.clientId = clientId
        self.extraParameters = extraParameters
        self.clientCapabilities = clientCapabilities
        self.tokenType = tokenType
    }
}

/// Where an OAuth flow signs in: a Microsoft authority (v2.0 endpoint paths) or any OpenID Connect issuer
/// (endpoints from its discovery document).
public enum IdentityEndpoint: Sendable, Hashable {
    /// E.g. `https://login.microsoftonline.com/organizations`, without a trailing `/`.
    case authority(String)
    /// An issuer identifier exactly as written (a trailing `/` is significant: it must equal the tokens' `iss`).
    case issuer(String)
}

/// Settings of the `native` flow: Microsoft Entra External ID native authentication.
public struct NativeAccount: Sendable, Hashable {
    /// How the user proves who they are.
    public enum Challenge: String, Sendable, Hashable, CaseIterable {
        case password
        /// An email one-time passcode, typed at a terminal prompt.
        case otp
    }

    /// An External ID (`*.ciamlogin.com`) authority.
    public var client: OAuthClient
    public var username: String
    /// Default `.password`.
    public var challenge: Challenge
    /// The variable holding the password; when unset (or not given) the password is asked for at a hidden prompt.
    public var passwordEnv: String?

    public init(client: OAuthClient, username: String, challenge: Challenge = .password, passwordEnv: String? = nil) {
        self.client = client
        self.username = username
        self.challenge = challenge
        self.passwordEnv = passwordEnv
    }
}

/// Settings of the `browser` flow: authorization code + PKCE with a loopback redirect (RFC 8252).
public struct BrowserAccount: Sendable, Hashable {
    public var client: OAuthClient
    public var prompt: SignInPrompt?
    /// Pre-fills the user name (`login_hint`).
    public var loginHint: String?
    /// Skips home-realm discovery (`domain_hint`).
    public var domainHint: String?
    /// The loopback port for the redirect; 0 (the default) = any free port.
    public var redirectPort: Int

    public init(
        client: OAuthClient,
        prompt: SignInPrompt? = nil,
        loginHint: String? = nil,
        domainHint: String? = nil,
        redirectPort: Int = 0
    ) {
        self.client = client
        self.prompt = prompt
        self.loginHint = loginHint
        self.domainHint = domainHint
        self.redirectPort = redirectPort
    }
}

/// The OpenID Connect `prompt` values Microsoft accepts for interactive sign-in.
public enum SignInPrompt: String, Sendable, Hashable, CaseIterable {
    case login
    case none
    case consent
    case selectAccount = "select_account"
    case create
}

/// Settings of the `client-credentials` flow: the application signs in as itself.
public struct ClientCredentialsAccount: Sendable, Hashable {
    /// How the application proves its identity.
    public enum Credential: Sendable, Hashable {
        /// The name of the environment variable holding the client secret (checked to be set at load time).
        case secretEnv(String)
        /// PEM files for a signed client assertion (checked to exist at load time; absolute paths).
        case certificate(certFile: String, keyFile: String)
        /// A JWT the platform issues (a Kubernetes service-account token, a CI job's ID token), presented as the
        /// client assertion (RFC 7521 §4.2, RFC 7523 §2.2) — workload identity federation.
        case clientAssertion(AssertionSource)
    }

    /// Where a platform-issued client assertion comes from (`clientAssertion`): exactly one source, read again at
    /// every token request because the platform rotates it.
    public enum AssertionSource: Sendable, Hashable {
        /// `file`: a file the platform rewrites (absolute path; checked to exist at load time).
        case file(String)
        /// `fileEnv`: a variable naming that file (`AZURE_FEDERATED_TOKEN_FILE`), and the absolute path it named
        /// at load time (checked to be set and the file to exist).
        case fileEnv(variable: String, file: String)
        /// `tokenEnv`: a variable holding the JWT itself (checked to be set at load time).
        case tokenEnv(String)
        /// `command`: a program that prints the JWT, run without a shell; `timeoutSeconds`, default 30 seconds.
        case command(argv: [String], timeout: Duration)
    }

    /// Where a client secret goes (RFC 6749 §2.3.1): the form body (`post`, MSAL's default) or HTTP Basic.
    public enum SecretMethod: String, Sendable, Hashable, CaseIterable {
        case post
        case basic
    }

    /// How a client assertion is signed: PS256 with `x5t#S256` (Microsoft's current recommendation) or the
    /// legacy RS256 with a SHA-1 `x5t`.
    public enum AssertionAlgorithm: String, Sendable, Hashable, CaseIterable {
        case ps256 = "PS256"
        case rs256 = "RS256"
    }

    public var client: OAuthClient
    public var credential: Credential
    /// `clientAuthentication`, default `post`; only meaningful with a secret.
    public var secretMethod: SecretMethod
    /// `certificate.algorithm`, default `PS256`; only meaningful with a certificate.
    public var assertionAlgorithm: AssertionAlgorithm

    public init(
        client: OAuthClient, credential: Credential, secretMethod: SecretMethod = .post,
        assertionAlgorithm: AssertionAlgorithm = .ps256
    ) {
        self.client = client
        self.credential = credential
        self.secretMethod = secretMethod
        self.assertionAlgorithm = assertionAlgorithm
    }
}

/// Settings of the `refresh-token` flow: start from a refresh token obtained elsewhere.
public struct RefreshTokenAccount: Sendable, Hashable {
    public var client: OAuthClient
    /// The name of the environment variable holding the refresh token (checked to be set at load time).
    public var refreshTokenEnv: String

    init(client: OAuthClient, refreshTokenEnv: String) {
        self.client = client
        self.refreshTokenEnv = refreshTokenEnv
    }
}

/// Settings of the `command` flow: run a CLI that already has a session and read the token it prints.
public struct CommandAccount: Sendable, Hashable {
    /// How long the command may run when `timeoutSeconds` is not given.
    public static let defaultTimeout = Duration.seconds(30)

    /// The placeholders substituted in each argument.
    static let placeholders: Set<String> = ["scopes", "resource"]

    /// The argument vector, run without a shell; `{scopes}` and `{resource}` are substituted.
    public var argv: [String]
    /// Default 30 seconds.
    public var timeout: Duration

    public init(argv: [String], timeout: Duration = CommandAccount.defaultTimeout) {
        self.argv = argv
        self.timeout = timeout
    }
}

/// Settings of the `static` flow: one fixed token (for example a personal access token).
public struct StaticTokenAccount: Sendable, Hashable {
    /// The name of the environment variable holding the token (checked to be set at load time).
    public var tokenEnv: String

    public init(tokenEnv: String) {
        self.tokenEnv = tokenEnv
    }
}
