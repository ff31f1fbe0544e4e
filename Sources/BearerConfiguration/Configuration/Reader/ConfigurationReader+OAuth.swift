// The keys the OAuth flows share, the native and browser flows' own keys, and MicrosoftAuthority: the
// rules for an authority URL (also used for the firebase flow's Microsoft tenant).

import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// The keys every OAuth flow shares: `authority` or `issuer`, `clientId`, `extraParameters`,
    /// `clientCapabilities`, `tokenType`.
    func readOAuthClient(_ account: ObjectReader, flow: AccountFlow) -> OAuthClient? {
        let endpoint = readEndpoint(account, flow: flow)
        let clientId = account.nonEmptyString("clientId", required: true)
        let reserved = Self.reservedParameters(for: flow)
        let extraParameters = readParameters(account, reserved: reserved)
        let clientCapabilities = account.stringArray("clientCapabilities", allowEmpty: true)
        let tokenType: TokenTypePreference? = account.contains("tokenType") ? account.choice("tokenType") : .bearer
        guard let endpoint, let clientId, let tokenType else { return nil }
        return OAuthClient(
            endpoint: endpoint,
            clientId: clientId,
            extraParameters: extraParameters ?? [:],
            clientCapabilities: clientCapabilities ?? [],
            tokenType: tokenType
        )
    }

    private func readEndpoint(_ account: ObjectReader, flow: AccountFlow) -> IdentityEndpoint? {
        if flow == .native { return readAuthority(account, flow: flow) }
        switch (account.contains("authority"), account.contains("issuer")) {
        case (true, true):
            problems.report(account.path, "give either \"authority\" or \"issuer\", not both")
            return nil
        case (false, false):
            problems.report(
                account.path,
                "needs \"authority\" (a Microsoft authority) or \"issuer\" (any OpenID Connect issuer)"
            )
            return nil
        case (true, false): return readAuthority(account, flow: flow)
        case (false, true): return readIssuer(account)
        }
    }

    private static let externalIDExample = "\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\""
    private static let authorityExample =
        "\"https://login.microsoftonline.com/organizations\" or \(externalIDExample)"

    /// A Microsoft authority (SPEC §6.2), normalized without a trailing `/`.
    private func readAuthority(_ account: ObjectReader, flow: AccountFlow) -> IdentityEndpoint? {
        guard let text = account.nonEmptyString("authority", required: true) else { return nil }
        guard let url = secureURL(account, "authority", text, example: Self.authorityExample) else { return nil }
        guard let kind = MicrosoftAuthority.kind(of: url) else {
            if MicrosoftAuthority.loginHosts.contains(url.host) {
                account.report(
                    "authority",
                    "must be \"https://\(url.host)/{tenant}\" with tenant common, organizations, consumers, "
                        + "a tenant ID (GUID) or a domain"
                )
            } else if url.host.hasSuffix(".ciamlogin.com") {
                account.report(
                    "authority", "must be \"https://{tenant}.ciamlogin.com/{tenant}\" such as " + Self.externalIDExample
                )
            } else {
                account.report(
                    "authority",
                    "must be a Microsoft authority such as \(Self.authorityExample); "
                        + "use \"issuer\" for other OpenID Connect providers"
                )
            }
            return nil
        }
        if flow == .native, kind == .workforce {
            account.report(
                "authority", "the native flow needs an External ID authority such as " + Self.externalIDExample)
            return nil
        }
        var path = Substring(url.path)
        while path.hasSuffix("/") { path.removeLast() }
        let port = url.port.flatMap { $0 == 443 && url.scheme == "https" ? nil : ":\($0)" } ?? ""
        return .authority("\(url.scheme)://\(Authority.bracketed(url.host))\(port)\(path)")
    }

    /// Any OpenID Connect issuer, kept exactly as written: it must equal the `iss` of the tokens it issues.
    private func readIssuer(_ account: ObjectReader) -> IdentityEndpoint? {
        guard let text = account.nonEmptyString("issuer", required: true) else { return nil }
        guard secureURL(account, "issuer", text, example: "\"https://accounts.example.com\"") != nil else { return nil }
        return .issuer(text)
    }

    /// An https URL (http only on loopback) with no user info, query or fragment.
    func secureURL(_ object: ObjectReader, _ key: String, _ text: String, example: String) -> URLParts? {
        guard let url = try? URLParts(parsing: text), url.userinfo == nil, url.query == nil, url.fragment == nil,
            url.scheme == "https" || url.scheme == "http"
        else {
            object.report(key, "must be an https URL such as \(example)")
            return nil
        }
        guard url.scheme == "https" || url.isLoopback else {
            object.report(key, "must use https (http is allowed only for loopback hosts)")
            return nil
        }
        return url
    }

    /// `extraParameters`: string to string; names the proxy sends itself are refused with the reason.
    func readParameters(_ account: ObjectReader, reserved: [String: String]) -> [String: String]? {
        guard let parameters = account.object("extraParameters") else { return nil }
        var result: [String: String] = [:]
        for name in parameters.keys {
            guard let value = parameters.value(name),
                let text = JSONValue.string(value, at: parameters.path(name), problems: problems)
            else { continue }
            if name.isEmpty {
                parameters.report(name, "a parameter name must not be empty")
            } else if let reason = reserved[name.lowercased()] {
                parameters.report(name, reason)
            } else {
                result[name] = text
            }
        }
        return result
    }

    /// Parameters an OAuth flow sends itself, with what to do instead.
    static func reservedParameters(for flow: AccountFlow) -> [String: String] {
        let protocolParameters = [
            "client_assertion", "client_assertion_type", "client_secret", "code", "code_challenge",
            "code_challenge_method", "code_verifier", "device_code", "grant_type", "nonce", "password",
            "redirect_uri", "refresh_token", "response_mode", "response_type", "state", "username",
        ]
        var reserved = Dictionary(uniqueKeysWithValues: protocolParameters.map { ($0, "is sent by the proxy itself") })
        reserved["client_id"] = "is sent by the proxy itself; use \"clientId\""
        reserved["scope"] = "is sent by the proxy itself, from the routes' \"scopes\""
        reserved["dpop_jkt"] = "is sent by the proxy itself with \"tokenType\": \"dpop\""
        if flow == .browser {
            reserved["prompt"] = "use \"prompt\" instead"
            reserved["login_hint"] = "use \"loginHint\" instead"
            reserved["domain_hint"] = "use \"domainHint\" instead"
        }
        return reserved
    }

    func readNative(_ account: ObjectReader) -> NativeAccount? {
        let client = readOAuthClient(account, flow: .native)
        let username = account.nonEmptyString("username", required: true)
        let challenge: NativeAccount.Challenge? =
            account.contains("challenge") ? account.choice("challenge") : .password
        let passwordEnv = readVariableName(account, "passwordEnv", required: false, mustBeSet: false)
        if challenge == .otp, account.contains("passwordEnv") {
            account.report("passwordEnv", "only used with \"challenge\": \"password\"")
        }
        guard let client, let username, let challenge else { return nil }
        return NativeAccount(client: client, username: username, challenge: challenge, passwordEnv: passwordEnv)
    }

    func readBrowser(_ account: ObjectReader) -> BrowserAccount? {
        let client = readOAuthClient(account, flow: .browser)
        let prompt: SignInPrompt? = account.choice("prompt")
        let loginHint = account.nonEmptyString("loginHint")
        let domainHint = account.nonEmptyString("domainHint")
        let redirectPort = account.integer("redirectPort", in: 0...65535)
        guard let client else { return nil }
        return BrowserAccount(
            client: client,
            prompt: prompt,
            loginHint: loginHint,
            domainHint: domainHint,
            redirectPort: redirectPort ?? 0
        )
    }
}

/// Microsoft authority URLs: `https://login.microsoftonline.com/{tenant}` (and the sovereign clouds), or
/// `https://{tenant}.ciamlogin.com/{tenant}` for External ID. Loopback hosts stand in for test identity providers.
enum MicrosoftAuthority {
    /// Login hosts of the public and sovereign clouds.
    static let loginHosts: Set<String> = [
        "login.microsoftonline.com", "login.microsoftonline.us", "login.chinacloudapi.cn",
        "login.partner.microsoftonline.cn",
    ]

    /// The kinds of authority, which decide which flows may use it.
    package enum Kind: Sendable, Equatable {
        case workforce
        case externalID
        case loopback
    }

    /// Tenants are `common`, `organizations`, `consumers`, a GUID, or a domain such as `contoso.onmicrosoft.com`.
    static func isTenant(_ text: some StringProtocol) -> Bool {
        let tenant = Substring(text)
        if ["common", "organizations", "consumers"].contains(tenant.lowercased()) { return true }
        if isGUID(tenant) { return true }
        return tenant.contains(".") && HostName.isValidName(tenant)
    }

    /// `8-4-4-4-12` hexadecimal digits.
    static func isGUID(_ text: Substring) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.utf8.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.utf8.allSatisfy(URICharacters.isHexDigit) }
    }

    /// The kind of a parsed https (or loopback http) URL, or `nil` if it is not a Microsoft authority.
    package static func kind(of url: URLParts) -> Kind? {
        if url.isLoopback { return .loopback }
        let segments = url.path.split(separator: "/")
        guard segments.count == 1, url.port == nil || url.port == 443 else { return nil }
        if loginHosts.contains(url.host) { return isTenant(segments[0]) ? .workforce : nil }
        let labels = url.host.split(separator: ".")
        if labels.count == 3, url.host.hasSuffix(".ciamlogin.com") { return .externalID }
        return nil
    }
}
