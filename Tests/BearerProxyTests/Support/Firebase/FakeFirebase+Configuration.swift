extension FakeFirebase {
    /// What the fake Firebase project is at start. Everything but the identifiers can be changed later through the
    /// fake's knobs.
    struct Configuration: Sendable {
        /// The Web API key every Identity Toolkit and securetoken call must carry (`?key=` or `x-goog-api-key`).
        /// In `emulatorMode` any non-empty key is accepted, as the Auth emulator does.
        var apiKey = FakeFirebase.defaultAPIKey
        /// The project id: `aud` of the ID tokens and the last segment of their `iss`.
        var projectID = FakeFirebase.defaultProjectID
        /// The project number securetoken answers as `project_id` (a decimal string).
        var projectNumber = FakeFirebase.defaultProjectNumber
        /// The client id of the Azure app configured for `microsoft.com` (the `client_id` of the `authUri`, the
        /// `aud` of the Microsoft ID token, the `appid` of the Graph token).
        var azureClientID = FakeFirebase.defaultAzureClientID
        /// The authorized domains a `continueUri` host must be one of (exact, case-insensitive). Firebase
        /// authorizes `localhost` by default, not `127.0.0.1`.
        var authorizedDomains = ["localhost"]
        /// The redirect URIs registered on the Azure app (Web platform): nil accepts any `redirect_uri` at
        /// `/microsoft/authorize`; otherwise it must be one of them, the port ignored for `localhost` as Entra does.
        var registeredRedirectURIs: [String]?
        /// Who signs in at `/microsoft/authorize`.
        var microsoftUser: MicrosoftUser = .alice
        /// Whether `microsoft.com` is an enabled sign-in provider.
        var microsoftEnabled = true
        /// Behave like the Auth emulator instead of production: any non-empty API key, `createAuthUri` with a
        /// `providerId` answers 501, and `signInWithIdp` takes fake claims in `postBody`
        /// (`providerId=microsoft.com&id_token=<JSON claims>`) instead of an authorization-code callback.
        var emulatorMode = false
        /// Email enumeration protection: a wrong email and a wrong password both answer
        /// `INVALID_LOGIN_CREDENTIALS` (the default for projects created since September 2023).
        var emailEnumerationProtection = true
        /// Lifetime of Firebase ID tokens in seconds (`expiresIn` / `expires_in`, sent as a string).
        var expiresIn = 3600
        /// How `signInWithIdp` reports the Microsoft access token's lifetime (`oauthExpireIn`).
        var oauthExpireIn: OAuthExpireIn = .int(3599)
        /// Whether securetoken answers a refresh with a new refresh token (the old one stays valid). Production
        /// returns the same one.
        var rotateRefreshTokens = false

        init() {}
    }
}
