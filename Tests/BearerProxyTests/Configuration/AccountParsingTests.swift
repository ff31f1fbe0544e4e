import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Each flow's keys become its settings struct, with defaults filled in.
@Suite struct AccountParsingTests {
    typealias F = ConfigurationFixture

    static let clientId = "00000000-0000-0000-0000-000000000000"
    static let graphDefault =
        #"{"prefix": "/graph", "upstream": "https://graph.microsoft.com/v1.0", "#
        + #""scopes": ["https://graph.microsoft.com/.default"]}"#

    static func settings(_ account: String, routes: [String] = [F.route]) throws -> AccountSettings {
        try F.parse(F.account(account, routes: routes)).account.settings
    }

    @Test func deviceCodeWithAuthority() throws {
        let settings = try Self.settings(
            #"""
            {"flow": "device-code", "authority": "https://LOGIN.microsoftonline.com:443/Contoso.onmicrosoft.com/",
             "clientId": "\#(Self.clientId)", "extraParameters": {"resource": "x"}, "clientCapabilities": ["cp1"]}
            """#)
        #expect(
            settings
                == .deviceCode(
                    OAuthClient(
                        endpoint: .authority("https://login.microsoftonline.com/Contoso.onmicrosoft.com"),
                        clientId: Self.clientId, extraParameters: ["resource": "x"], clientCapabilities: ["cp1"])))
        #expect(settings.flow == .deviceCode)
    }

    @Test(arguments: [("bearer", TokenTypePreference.bearer), ("dpop", .dpop), ("auto", .auto)])
    func tokenTypeIsRead(_ text: String, _ expected: TokenTypePreference) throws {
        let settings = try Self.settings(
            #"{"flow": "device-code", "issuer": "https://id.example.com", "clientId": "cli", "#
                + #""tokenType": "\#(text)"}"#)
        #expect(settings.oauthClient?.tokenType == expected)
    }

    @Test func tokenTypeDefaultsToBearer() throws {
        let settings = try Self.settings(
            #"{"flow": "device-code", "issuer": "https://id.example.com", "clientId": "c"}"#)
        #expect(settings.oauthClient?.tokenType == .bearer)
    }

    @Test func issuerIsKeptExactly() throws {
        let settings = try Self.settings(
            #"{"flow": "device-code", "issuer": "https://id.example.com/", "clientId": "cli"}"#)
        #expect(settings == .deviceCode(OAuthClient(endpoint: .issuer("https://id.example.com/"), clientId: "cli")))
    }

    @Test(arguments: [
        "https://login.microsoftonline.com/common", "https://login.microsoftonline.com/organizations",
        "https://login.microsoftonline.com/consumers", "https://login.microsoftonline.us/contoso.onmicrosoft.us",
        "https://login.chinacloudapi.cn/\(clientId)", "https://login.partner.microsoftonline.cn/common",
        "https://contoso.ciamlogin.com/contoso.onmicrosoft.com", "http://127.0.0.1:9999/fake/tenant",
        "http://localhost:8080",
    ])
    func acceptsAuthority(_ authority: String) {
        let json = F.account(#"{"flow": "device-code", "authority": "\#(authority)", "clientId": "c"}"#)
        #expect(F.problems(json) == [])
    }

    @Test func nativeDefaultsToPassword() throws {
        let settings = try Self.settings(
            #"""
            {"flow": "native", "authority": "https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
             "clientId": "\#(Self.clientId)", "username": "alice@contoso.com", "passwordEnv": "UNSET_IS_FINE"}
            """#)
        guard case .native(let native) = settings else {
            Issue.record("expected native, got \(settings)")
            return
        }
        #expect(native.username == "alice@contoso.com")
        #expect(native.challenge == .password)
        #expect(native.passwordEnv == "UNSET_IS_FINE")
    }

    @Test func browserOptions() throws {
        let settings = try Self.settings(
            #"""
            {"flow": "browser", "authority": "https://login.microsoftonline.com/common", "clientId": "c",
             "prompt": "select_account", "loginHint": "alice@contoso.com", "domainHint": "contoso.com",
             "redirectPort": 8400}
            """#)
        let client = OAuthClient(endpoint: .authority("https://login.microsoftonline.com/common"), clientId: "c")
        #expect(
            settings
                == .browser(
                    BrowserAccount(
                        client: client, prompt: .selectAccount, loginHint: "alice@contoso.com",
                        domainHint: "contoso.com", redirectPort: 8400)))
    }

    @Test func clientCredentialsWithSecretOrCertificate() throws {
        let client = OAuthClient(endpoint: .authority("https://login.microsoftonline.com/common"), clientId: "c")
        let secret = try Self.settings(
            #"""
            {"flow": "client-credentials", "authority": "https://login.microsoftonline.com/common", "clientId": "c",
             "clientSecretEnv": "SECRET"}
            """#,
            routes: [Self.graphDefault])
        #expect(
            secret == .clientCredentials(ClientCredentialsAccount(client: client, credential: .secretEnv("SECRET"))))

        let certificate = try Self.settings(
            #"""
            {"flow": "client-credentials", "authority": "https://login.microsoftonline.com/common", "clientId": "c",
             "certificate": {"certFile": "\#(F.existingFile)", "keyFile": "\#(F.existingFile)"}}
            """#, routes: [Self.graphDefault])
        #expect(
            certificate
                == .clientCredentials(
                    ClientCredentialsAccount(
                        client: client, credential: .certificate(certFile: F.existingFile, keyFile: F.existingFile))))
    }

    @Test func refreshTokenStaticAndCommand() throws {
        let refresh = try Self.settings(
            #"{"flow": "refresh-token", "issuer": "https://id.example.com", "clientId": "c", "#
                + #""refreshTokenEnv": "SECRET"}"#)
        #expect(
            refresh
                == .refreshToken(
                    RefreshTokenAccount(
                        client: OAuthClient(endpoint: .issuer("https://id.example.com"), clientId: "c"),
                        refreshTokenEnv: "SECRET")))

        let fixed = try F.parse(
            F.account(
                #"{"flow": "static", "tokenEnv": "SECRET"}"#,
                routes: [#"{"prefix": "/gh", "upstream": "https://api.github.com"}"#]))
        #expect(fixed.account.settings == .staticToken(StaticTokenAccount(tokenEnv: "SECRET")))
        #expect(fixed.routes.routes[0].auth == .bearer(ScopeSet([])))

        let command = try Self.settings(
            #"""
            {"flow": "command",
             "command": ["az", "account", "get-access-token", "--scope", "{scopes}", "--query", "{a: b}", ""]}
            """#)
        #expect(
            command
                == .command(
                    CommandAccount(argv: [
                        "az", "account", "get-access-token", "--scope", "{scopes}", "--query", "{a: b}", "",
                    ])))
        let timed = try Self.settings(#"{"flow": "command", "command": ["gh", "auth", "token"], "timeoutSeconds": 5}"#)
        #expect(timed == .command(CommandAccount(argv: ["gh", "auth", "token"], timeout: .seconds(5))))
    }

    @Test func firebaseWithMicrosoftAndItsRoutes() throws {
        let configuration = try F.parse(
            F.account(
                #"""
                {"flow": "firebase", "apiKeyEnv": "SECRET", "projectId": "my-proj", "provider": "microsoft.com",
                 "tenant": "contoso.onmicrosoft.com", "prompt": "select_account", "loginHint": "alice@contoso.com",
                 "scopes": ["User.Read", "Mail.Read"], "redirectPort": 8975,
                 "extraParameters": {"domain_hint": "contoso.com"}, "authDomain": "my-proj.firebaseapp.com",
                 "gcipTenantId": "tenant-a1b2c", "emulatorHost": "127.0.0.1:9099"}
                """#,
                routes: [
                    #"{"prefix": "/api", "upstream": "https://api-xyz.a.run.app", "token": "firebase-id"}"#,
                    #"{"prefix": "/graph", "upstream": "https://graph.microsoft.com", "token": "provider-access"}"#,
                    #"{"prefix": "/mail", "upstream": "https://graph.microsoft.com", "token": "provider-access", "#
                        + #""scopes": ["Mail.Read"]}"#,
                    #"{"prefix": "/id", "upstream": "https://api-xyz.a.run.app"}"#,
                ]))
        let microsoft = FirebaseAccount.MicrosoftSignIn(
            tenant: "contoso.onmicrosoft.com", prompt: .selectAccount, loginHint: "alice@contoso.com",
            scopes: ScopeSet(["User.Read", "Mail.Read"]), redirectPort: 8975,
            extraParameters: ["domain_hint": "contoso.com"])
        #expect(
            configuration.account.settings
                == .firebase(
                    FirebaseAccount(
                        apiKeyEnv: "SECRET", projectId: "my-proj", provider: .microsoft(microsoft),
                        authDomain: "my-proj.firebaseapp.com", gcipTenantId: "tenant-a1b2c",
                        emulatorHost: ListenAddress(host: "127.0.0.1", port: 9099))))
        #expect(
            configuration.routes.routes.map(\.auth) == [
                .firebaseID, .providerAccess(ScopeSet(["Mail.Read", "User.Read"])),
                .providerAccess(ScopeSet(["Mail.Read"])),
                .firebaseID,
            ])
    }

    @Test func firebaseWithPasswordAndTheEmulatorFromTheEnvironment() throws {
        var environment = F.environment
        environment["FIREBASE_AUTH_EMULATOR_HOST"] = "localhost:9099"
        let configuration = try F.parse(
            F.account(
                #"{"flow": "firebase", "apiKeyEnv": "SECRET", "projectId": "my-proj", "provider": "password", "#
                    + #""email": "a@b.c"}"#,
                routes: [#"{"prefix": "/api", "upstream": "https://api-xyz.a.run.app"}"#]),
            environment: environment)
        #expect(
            configuration.account.settings
                == .firebase(
                    FirebaseAccount(
                        apiKeyEnv: "SECRET", projectId: "my-proj", provider: .password(.init(email: "a@b.c")),
                        emulatorHost: ListenAddress(host: "localhost", port: 9099))))
    }
}
