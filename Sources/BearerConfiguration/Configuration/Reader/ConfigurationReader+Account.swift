import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// `account`: the flow, then that flow's keys. Also fills in what the routes need to know.
    package func readAccount(_ root: ObjectReader, context: inout RouteContext) -> AccountConfiguration? {
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
            case .dev: .dev
            case .native: readNative(account).map(AccountSettings.native)
            case .deviceCode: readOAuthClient(account, flow: flow).map(AccountSettings.deviceCode)
            case .browser: readBrowser(account).map(AccountSettings.browser)
            case .clientCredentials: readClientCredentials(account).map(AccountSettings.clientCredentials)
            case .refreshToken: readRefreshToken(account).map(AccountSettings.refreshToken)
            case .command: readCommand(account).map(AccountSettings.command)
            case .staticToken: readStaticToken(account).map(AccountSettings.staticToken)
            case .firebase: readFirebase(account, context: &context).map(AccountSettings.firebase)
            }
        return settings.map(AccountConfiguration.init)
    }

    private func readClientCredentials(_ account: ObjectReader) -> ClientCredentialsAccount? {
        let client = readOAuthClient(account, flow: .clientCredentials)
        let credential: ClientCredentialsAccount.Credential?
        var algorithm: ClientCredentialsAccount.AssertionAlgorithm?
        switch (account.contains("clientSecretEnv"), account.contains("certificate")) {
        case (true, true):
            problems.report(account.path, "give either \"clientSecretEnv\" or \"certificate\", not both")
            credential = nil
        case (false, false):
            problems.report(account.path, "the client-credentials flow needs \"clientSecretEnv\" or \"certificate\"")
            credential = nil
        case (true, false):
            credential = readVariableName(account, "clientSecretEnv", required: true, mustBeSet: true)
                .map(ClientCredentialsAccount.Credential.secretEnv)
        case (false, true):
            (credential, algorithm) = readCertificate(account)
        }
        let method: ClientCredentialsAccount.SecretMethod? = account.choice("clientAuthentication")
        if account.contains("clientAuthentication") && account.contains("certificate") {
            account.report("clientAuthentication", "applies to a client secret, not a certificate")
        }
        guard let client, let credential else { return nil }
        return ClientCredentialsAccount(
            client: client, credential: credential, secretMethod: method ?? .post,
            assertionAlgorithm: algorithm ?? .ps256)
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
        guard let elements = account.array("command", required: true) else { return nil }
        guard !elements.isEmpty else {
            account.report("command", "must not be empty: give the program and its arguments")
            return nil
        }
        var argv: [String] = []
        for (index, element) in elements.enumerated() {
            let path = account.path("command").index(index)
            guard let argument = JSONValue.string(element, at: path, problems: problems) else { continue }
            if index == 0, argument.isEmpty { problems.report(path, "must name the program to run") }
            for placeholder in Self.placeholders(in: argument) where !CommandAccount.placeholders.contains(placeholder)
            {
                let hint = SpellingSuggestion.closest(to: placeholder, among: CommandAccount.placeholders)
                problems.report(
                    path,
                    "unknown placeholder \"{\(placeholder)}\"" + (hint.map { " (did you mean \"{\($0)}\"?)" } ?? "")
                        + "; only {scopes} and {resource} are substituted"
                )
            }
            argv.append(argument)
        }
        guard argv.count == elements.count else { return nil }
        return CommandAccount(argv: argv, timeout: timeout ?? CommandAccount.defaultTimeout)
    }

    /// The names inside `{name}` (letters, digits and `_` only, so JSON or JMESPath braces are left alone).
    package static func placeholders(in argument: String) -> [String] {
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
