import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// The `firebase` flow (docs/firebase.md §6).
    func readFirebase(_ account: ObjectReader, context: inout RouteContext) -> FirebaseAccount? {
        let apiKeyEnv = readVariableName(account, "apiKeyEnv", required: true, mustBeSet: true)
        let projectId = readProjectId(account)
        let providerName: FirebaseAccount.ProviderName? =
            account.contains("provider") ? account.choice("provider") : .microsoft
        context.firebaseProvider = providerName

        let provider: FirebaseAccount.Provider?
        switch providerName {
        case .microsoft?:
            for key in FirebaseAccount.passwordOnlyKeys.sorted() where account.contains(key) {
                account.report(key, "only used with \"provider\": \"password\"")
            }
            let signIn = readMicrosoftSignIn(account)
            context.firebaseScopes = signIn?.scopes
            provider = signIn.map(FirebaseAccount.Provider.microsoft)
        case .password?:
            for key in FirebaseAccount.microsoftOnlyKeys.sorted() where account.contains(key) {
                account.report(key, "only used with \"provider\": \"microsoft.com\"")
            }
            provider = readPasswordSignIn(account).map(FirebaseAccount.Provider.password)
        case nil:
            provider = nil
        }

        let authDomain = account.nonEmptyString("authDomain")
        if let authDomain, !HostName.isValidName(Substring(authDomain)) {
            account.report("authDomain", "must be a host name such as \"my-proj.firebaseapp.com\"")
        }
        let gcipTenantId = account.nonEmptyString("gcipTenantId")
        if let gcipTenantId, !gcipTenantId.utf8.allSatisfy({ URICharacters.isUnreserved($0) }) {
            account.report("gcipTenantId", "must be an Identity Platform tenant ID such as \"tenant-a1b2c\"")
        }
        let emulatorHost = readEmulatorHost(account)
        let apiBaseURL = readAPIBaseURL(account)
        if account.contains("apiBaseURL"), account.contains("emulatorHost") {
            account.report("apiBaseURL", "use emulatorHost or apiBaseURL, not both")
        }

        guard let apiKeyEnv, let projectId, let provider else { return nil }
        return FirebaseAccount(
            apiKeyEnv: apiKeyEnv,
            projectId: projectId,
            provider: provider,
            authDomain: authDomain,
            gcipTenantId: gcipTenantId,
            emulatorHost: emulatorHost,
            apiBaseURL: apiBaseURL
        )
    }

    /// Google Cloud project IDs: lowercase letters, digits and hyphens, starting with a letter; legacy
    /// domain-scoped IDs (`example.com:my-proj`) also contain `.` and `:`.
    private func readProjectId(_ account: ObjectReader) -> String? {
        guard let projectId = account.nonEmptyString("projectId", required: true) else { return nil }
        let allowed = projectId.utf8.allSatisfy {
            (0x61...0x7A).contains($0) || URICharacters.isDigit($0) || "-.:".utf8.contains($0)
        }
        guard allowed, let first = projectId.utf8.first, (0x61...0x7A).contains(first) else {
            account.report("projectId", "must be a Firebase project ID (lowercase letters, digits and hyphens)")
            return nil
        }
        return projectId
    }

    private func readMicrosoftSignIn(_ account: ObjectReader) -> FirebaseAccount.MicrosoftSignIn? {
        let tenant = account.nonEmptyString("tenant")
        if let tenant, !MicrosoftAuthority.isTenant(tenant) {
            account.report(
                "tenant",
                "must be common, organizations, consumers, a tenant ID (GUID) or a domain such as "
                    + "\"contoso.onmicrosoft.com\""
            )
        }
        let prompt: SignInPrompt? = account.choice("prompt")
        let loginHint = account.nonEmptyString("loginHint")
        let scopes = readScopes(account, "scopes", rejectOpenIDConnect: false)
        let redirectPort = account.integer("redirectPort", in: 0...65535)
        let extraParameters = readParameters(account, reserved: Self.reservedCustomParameters)
        return FirebaseAccount.MicrosoftSignIn(
            tenant: tenant,
            prompt: prompt,
            loginHint: loginHint,
            scopes: scopes ?? ScopeSet([]),
            redirectPort: redirectPort ?? 0,
            extraParameters: extraParameters ?? [:]
        )
    }

    /// Firebase's reserved `customParameter` names, plus the ones that have their own key.
    private static let reservedCustomParameters: [String: String] = {
        var reserved = Dictionary(
            uniqueKeysWithValues: FirebaseAccount.reservedCustomParameters.map {
                (
                    $0,
                    "is reserved: Firebase sets client_id, redirect_uri, response_mode, response_type, scope and state"
                )
            }
        )
        reserved["tenant"] = "use \"tenant\" instead"
        reserved["prompt"] = "use \"prompt\" instead"
        reserved["login_hint"] = "use \"loginHint\" instead"
        return reserved
    }()

    private func readPasswordSignIn(_ account: ObjectReader) -> FirebaseAccount.PasswordSignIn? {
        let email = account.nonEmptyString("email", required: true)
        if let email, !Self.looksLikeEmail(email) {
            account.report("email", "must be an email address")
        }
        let passwordEnv = readVariableName(account, "passwordEnv", required: false, mustBeSet: false)
        guard let email else { return nil }
        return FirebaseAccount.PasswordSignIn(email: email, passwordEnv: passwordEnv)
    }

    /// `local@domain` with something on both sides and no spaces: enough to catch a value in the wrong key.
    static func looksLikeEmail(_ text: String) -> Bool {
        guard let at = text.lastIndex(of: "@") else { return false }
        return at != text.startIndex && text.index(after: at) != text.endIndex
            && !text.unicodeScalars.contains { $0.properties.isWhitespace }
    }

    /// `apiBaseURL`: where Firebase Auth's REST paths are served, laid out as the emulator lays them out; https, or
    /// http on loopback. Kept without a trailing slash.
    private func readAPIBaseURL(_ account: ObjectReader) -> String? {
        guard let text = account.nonEmptyString("apiBaseURL") else { return nil }
        guard secureURL(account, "apiBaseURL", text, example: "\"https://firebase-gateway.example\"") != nil else {
            return nil
        }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// `emulatorHost`, else `FIREBASE_AUTH_EMULATOR_HOST`: loopback only, because the emulator accepts any
    /// credentials and must never stand in for the real service by accident.
    private func readEmulatorHost(_ account: ObjectReader) -> ListenAddress? {
        let example = "a loopback host:port such as \"127.0.0.1:9099\""
        if let text = account.string("emulatorHost") {
            guard let address = ListenAddress(parsing: text), address.isLoopback, address.port > 0 else {
                account.report("emulatorHost", "must be " + example)
                return nil
            }
            return address
        }
        guard !account.contains("emulatorHost"), let text = environment[FirebaseAccount.emulatorHostVariable],
            !text.isEmpty
        else { return nil }
        guard let address = ListenAddress(parsing: text), address.isLoopback, address.port > 0 else {
            // The variable's value is not a secret, but it is not repeated either: messages never echo the environment.
            account.report(
                "emulatorHost", "environment variable \(FirebaseAccount.emulatorHostVariable) must be " + example)
            return nil
        }
        return address
    }
}
