import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// `account`: the flow, then that flow's keys. Also fills in what the routes need to know.
    func readAccount(_ root: ObjectReader, context: inout RouteContext) -> AccountConfiguration? {
        guard let account = root.object("account", required: true) else { return nil }
        guard account.contains("flow") else {
            let flows = AccountFlow.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            account.report("flow", "is required (one of \(flows))")
            return nil
        }
        // Without a valid flow nobody can tell which other keys belong, so they are not checked.
        guard let flow: AccountFlow = account.choice("flow") else { return nil }
        context.flow = flow
        account.rejectUnknownKeys(allowed: flow.keys, explain: flow.unknownKeyMessage)

        let settings: AccountSettings? =
            switch flow {
            case .dev: readDev(account)
            case .native: readNative(account).map(AccountSettings.native)
            case .deviceCode: readOAuthClient(account, flow: flow).map(AccountSettings.deviceCode)
            case .browser: readBrowser(account).map(AccountSettings.browser)
            case .clientCredentials: readClientCredentials(account).map(AccountSettings.clientCredentials)
            case .managedIdentity: readManagedIdentity(account).map(AccountSettings.managedIdentity)
            case .refreshToken: readRefreshToken(account).map(AccountSettings.refreshToken)
            case .command: readCommand(account).map(AccountSettings.command)
            case .staticToken: readStaticToken(account).map(AccountSettings.staticToken)
            case .firebase: readFirebase(account, context: &context).map(AccountSettings.firebase)
            }
        context.accountTokenType = settings?.tokenType
        return settings.map(AccountConfiguration.init)
    }

    /// `dev`: only `tokenType`, default `bearer` (`dpop` and `auto` make it issue DPoP-bound tokens).
    private func readDev(_ account: ObjectReader) -> AccountSettings? {
        guard account.contains("tokenType") else { return .dev() }
        let tokenType: TokenTypePreference? = account.choice("tokenType")
        return tokenType.map { .dev(tokenType: $0) }
    }

    /// The keys of the client-credentials flow's credentials, exactly one of which must be given.
    private static let credentialKeys = ["clientSecretEnv", "certificate", "clientAssertion"]

    private func readClientCredentials(_ account: ObjectReader) -> ClientCredentialsAccount? {
        let client = readOAuthClient(account, flow: .clientCredentials)
        var credential: ClientCredentialsAccount.Credential?
        var algorithm: ClientCredentialsAccount.AssertionAlgorithm?
        let given = Self.credentialKeys.filter(account.contains)
        switch given.first {
        case _ where given.count > 1:
            problems.report(
                account.path, "give only one of \"clientSecretEnv\", \"certificate\" and \"clientAssertion\"")
        case nil:
            problems.report(
                account.path,
                "the client-credentials flow needs \"clientSecretEnv\", \"certificate\" or \"clientAssertion\"")
        case "clientSecretEnv":
            credential = readVariableName(account, "clientSecretEnv", required: true, mustBeSet: true)
                .map(ClientCredentialsAccount.Credential.secretEnv)
        case "certificate":
            (credential, algorithm) = readCertificate(account)
        default:
            credential = readClientAssertion(account).map(ClientCredentialsAccount.Credential.clientAssertion)
        }
        let method: ClientCredentialsAccount.SecretMethod? = account.choice("clientAuthentication")
        if account.contains("clientAuthentication") {
            if account.contains("certificate") {
                account.report("clientAuthentication", "applies to a client secret, not a certificate")
            } else if account.contains("clientAssertion") {
                account.report("clientAuthentication", "applies to a client secret, not a client assertion")
            }
        }
        guard let client, let credential else { return nil }
        return ClientCredentialsAccount(
            client: client, credential: credential, secretMethod: method ?? .post,
            assertionAlgorithm: algorithm ?? .ps256)
    }

    /// The keys of `clientAssertion` that say where the assertion comes from, exactly one of which must be given.
    private static let assertionSourceKeys = ["file", "fileEnv", "tokenEnv", "command"]

    /// `clientAssertion: {"file": …}` (or another `key` of the same shape: an on-behalf-of route's `actorToken`), `{"fileEnv": …}`, `{"tokenEnv": …}` or `{"command": [...],
    /// "timeoutSeconds": …}`. Files must exist and variables be set now, so `check` finds a typo; the assertion
    /// itself is read only at token requests.
    func readClientAssertion(
        _ account: ObjectReader, key: String = "clientAssertion"
    ) -> ClientCredentialsAccount.AssertionSource? {
        guard let assertion = account.object(key) else { return nil }
        assertion.rejectUnknownKeys(allowed: ConfigurationKeys.clientAssertion)
        let timeout = assertion.timeout("timeoutSeconds")
        if assertion.contains("timeoutSeconds") && !assertion.contains("command") {
            assertion.report("timeoutSeconds", "applies to \"command\" only")
        }
        let given = Self.assertionSourceKeys.filter(assertion.contains)
        switch given.first {
        case _ where given.count > 1:
            problems.report(
                assertion.path, "give only one of \"file\", \"fileEnv\", \"tokenEnv\" and \"command\"")
            return nil
        case nil:
            problems.report(assertion.path, "needs one of \"file\", \"fileEnv\", \"tokenEnv\" or \"command\"")
            return nil
        case "file":
            return readFile(assertion, "file", required: true).map(ClientCredentialsAccount.AssertionSource.file)
        case "fileEnv":
            guard let variable = readVariableName(assertion, "fileEnv", required: true, mustBeSet: true),
                let name = environment[variable], !name.isEmpty,
                let file = existingFile(name, at: assertion.path("fileEnv"), namedBy: variable)
            else { return nil }
            return .fileEnv(variable: variable, file: file)
        case "tokenEnv":
            return readVariableName(assertion, "tokenEnv", required: true, mustBeSet: true)
                .map(ClientCredentialsAccount.AssertionSource.tokenEnv)
        default:
            guard let (argv, complete) = readArgv(assertion, "command"), complete else { return nil }
            return .command(argv: argv.map(\.value), timeout: timeout ?? CommandAccount.defaultTimeout)
        }
    }

    /// `certificate: {"certFile": …, "keyFile": …, "algorithm": "PS256"|"RS256"}`, both PEM files that must exist.
    private func readCertificate(
        _ account: ObjectReader
    ) -> (ClientCredentialsAccount.Credential?, ClientCredentialsAccount.AssertionAlgorithm?) {
        guard let certificate = account.object("certificate") else { return (nil, nil) }
        certificate.rejectUnknownKeys(allowed: ConfigurationKeys.certificate)
        let certFile = readFile(certificate, "certFile", required: true)
        let keyFile = readFile(certificate, "keyFile", required: true)
        let algorithm: ClientCredentialsAccount.AssertionAlgorithm? = certificate.choice("algorithm")
        guard let certFile, let keyFile else { return (nil, algorithm) }
        return (.certificate(certFile: certFile, keyFile: keyFile), algorithm)
    }

    private func readRefreshToken(_ account: ObjectReader) -> RefreshTokenAccount? {
        let client = readOAuthClient(account, flow: .refreshToken)
        let variable = readVariableName(account, "refreshTokenEnv", required: true, mustBeSet: true)
        guard let client, let variable else { return nil }
        return RefreshTokenAccount(client: client, refreshTokenEnv: variable)
    }

    private func readStaticToken(_ account: ObjectReader) -> StaticTokenAccount? {
        readVariableName(account, "tokenEnv", required: true, mustBeSet: true).map(StaticTokenAccount.init)
    }

    /// `command`: an argv array run without a shell, with `{scopes}` and `{resource}` substituted.
    private func readCommand(_ account: ObjectReader) -> CommandAccount? {
        let timeout = account.timeout("timeoutSeconds")
        guard let (argv, complete) = readArgv(account, "command") else { return nil }
        for (argument, path) in argv {
            for placeholder in Self.placeholders(in: argument) where !CommandAccount.placeholders.contains(placeholder)
            {
                let hint = SpellingSuggestion.closest(to: placeholder, among: CommandAccount.placeholders)
                problems.report(
                    path,
                    "unknown placeholder \"{\(placeholder)}\"" + (hint.map { " (did you mean \"{\($0)}\"?)" } ?? "")
                        + "; only {scopes} and {resource} are substituted"
                )
            }
        }
        guard complete else { return nil }
        return CommandAccount(argv: argv.map(\.value), timeout: timeout ?? CommandAccount.defaultTimeout)
    }

    /// An argument vector: a non-empty array of strings whose first names the program. The good arguments with
    /// their paths, and whether every element was one (each bad one is reported at its index); nil when there is
    /// no array to read.
    private func readArgv(
        _ object: ObjectReader, _ key: String
    ) -> (arguments: [(value: String, path: JSONPath)], complete: Bool)? {
        guard let elements = object.array(key, required: true) else { return nil }
        guard !elements.isEmpty else {
            object.report(key, "must not be empty: give the program and its arguments")
            return nil
        }
        var argv: [(value: String, path: JSONPath)] = []
        for (index, element) in elements.enumerated() {
            let path = object.path(key).index(index)
            guard let argument = JSONValue.string(element, at: path, problems: problems) else { continue }
            if index == 0, argument.isEmpty { problems.report(path, "must name the program to run") }
            argv.append((argument, path))
        }
        return (argv, argv.count == elements.count)
    }

    /// The names inside `{name}` (letters, digits and `_` only, so JSON or JMESPath braces are left alone).
    static func placeholders(in argument: String) -> [String] {
        var names: [String] = []
        var rest = Substring(argument)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}") else { break }
            let name = after[..<close]
            let isName = !name.isEmpty && name.utf8.allSatisfy { URICharacters.isAlpha($0) || $0 == 0x5F }
            if isName { names.append(String(name)) }
            rest = isName ? after[after.index(after: close)...] : after
        }
        return names
    }
}
