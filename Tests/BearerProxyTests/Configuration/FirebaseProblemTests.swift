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

/// Every problem the `firebase` flow and its routes can have, with its exact wording.
@Suite struct FirebaseProblemTests {
    typealias F = ConfigurationFixture

    static let base = #""apiKeyEnv": "SECRET", "projectId": "my-proj""#
    static let idRoute = #"{"prefix": "/api", "upstream": "https://api-xyz.a.run.app"}"#

    /// A firebase account with `members` besides the required keys, and the given routes.
    static func firebase(_ members: String, routes: [String] = [idRoute]) -> String {
        F.account(#"{"flow": "firebase", \#(base)\#(members.isEmpty ? "" : ", " + members)}"#, routes: routes)
    }

    /// A firebase account with Graph scopes and one route with `body`.
    static func microsoftRoute(_ body: String) -> String {
        firebase(
            #""scopes": ["User.Read", "Mail.Read"]"#,
            routes: [#"{"prefix": "/graph", "upstream": "https://graph.microsoft.com/v1.0", \#(body)}"#])
    }

    static let accountCases: [ProblemCase] = [
        ProblemCase(
            F.account(#"{"flow": "firebase", "projectId": "my-proj"}"#, routes: [idRoute]), "account.apiKeyEnv",
            "is required"),
        ProblemCase(
            F.account(
                #"{"flow": "firebase", "apiKeyEnv": "FIREBASE_API_KEY", "projectId": "my-proj"}"#, routes: [idRoute]),
            "account.apiKeyEnv", "environment variable FIREBASE_API_KEY is not set"),
        ProblemCase(
            F.account(#"{"flow": "firebase", "apiKeyEnv": "SECRET"}"#, routes: [idRoute]), "account.projectId",
            "is required"),
        ProblemCase(
            F.account(#"{"flow": "firebase", "apiKeyEnv": "SECRET", "projectId": "My_Project"}"#, routes: [idRoute]),
            "account.projectId", "must be a Firebase project ID (lowercase letters, digits and hyphens)"),
        ProblemCase(
            firebase(#""provider": "microsoft""#), "account.provider",
            "must be one of \"microsoft.com\", \"password\" (did you mean \"microsoft.com\"?)"),
        ProblemCase(firebase(#""email": "a@b.c""#), "account.email", "only used with \"provider\": \"password\""),
        ProblemCase(
            firebase(#""provider": "password", "email": "a@b.c", "tenant": "common""#), "account.tenant",
            "only used with \"provider\": \"microsoft.com\""),
        ProblemCase(firebase(#""provider": "password""#), "account.email", "is required"),
        ProblemCase(
            firebase(#""provider": "password", "email": "alice""#), "account.email", "must be an email address"),
        ProblemCase(
            firebase(#""provider": "password", "email": "a@b.c", "passwordEnv": "1PASSWORD""#), "account.passwordEnv",
            "must be the name of an environment variable (letters, digits and \"_\", not starting with a digit), "
                + "not its value"),
        ProblemCase(
            firebase(#""tenant": "contoso""#), "account.tenant",
            "must be common, organizations, consumers, a tenant ID (GUID) or a domain such as "
                + "\"contoso.onmicrosoft.com\""),
        ProblemCase(
            firebase(#""prompt": "always""#), "account.prompt",
            "must be one of \"login\", \"none\", \"consent\", \"select_account\", \"create\""),
        ProblemCase(firebase(#""loginHint": """#), "account.loginHint", "must not be empty"),
        ProblemCase(firebase(#""scopes": []"#), "account.scopes", "must list at least one scope"),
        ProblemCase(
            firebase(#""scopes": ["User.Read", "api://todo/ToDoList.Read"]"#), "account.scopes",
            "spans 2 resources (api://todo, https://graph.microsoft.com); the identity platform issues one token per "
                + "resource — use one route per resource"),
        ProblemCase(
            firebase(#""redirectPort": -1"#), "account.redirectPort", "must be an integer from 0 to 65535"),
        ProblemCase(
            firebase(#""extraParameters": {"response_mode": "query"}"#), "account.extraParameters.response_mode",
            "is reserved: Firebase sets client_id, redirect_uri, response_mode, response_type, scope and state"),
        ProblemCase(
            firebase(#""extraParameters": {"login_hint": "a@b.c"}"#), "account.extraParameters.login_hint",
            "use \"loginHint\" instead"),
        ProblemCase(
            firebase(#""authDomain": "https://my-proj.firebaseapp.com""#), "account.authDomain",
            "must be a host name such as \"my-proj.firebaseapp.com\""),
        ProblemCase(
            firebase(#""gcipTenantId": "tenant/1""#), "account.gcipTenantId",
            "must be an Identity Platform tenant ID such as \"tenant-a1b2c\""),
        ProblemCase(
            firebase(#""emulatorHost": "10.0.0.5:9099""#), "account.emulatorHost",
            "must be a loopback host:port such as \"127.0.0.1:9099\""),
        ProblemCase(
            firebase(""), "account.emulatorHost",
            "environment variable FIREBASE_AUTH_EMULATOR_HOST must be a loopback host:port such as \"127.0.0.1:9099\"",
            environment: ["SECRET": F.secretValue, "FIREBASE_AUTH_EMULATOR_HOST": "emulator.internal:9099"]),
        ProblemCase(
            firebase(#""domainHint": "contoso.com""#), "account.domainHint",
            "not used by the \"firebase\" flow (only by: browser)"),
    ]

    static let routeCases: [ProblemCase] = [
        ProblemCase(
            firebase("", routes: [#"{"prefix": "/api", "upstream": "https://api-xyz.a.run.app", "token": "id"}"#]),
            "routes[0].token", "must be one of \"firebase-id\", \"provider-access\""),
        ProblemCase(
            firebase(
                "", routes: [#"{"prefix": "/api", "upstream": "https://api-xyz.a.run.app", "scopes": ["User.Read"]}"#]),
            "routes[0].scopes", "not used with \"token\": \"firebase-id\" (a Firebase ID token has no scopes)"),
        ProblemCase(
            firebase(
                #""provider": "password", "email": "a@b.c""#,
                routes: [#"{"prefix": "/g", "upstream": "https://graph.microsoft.com", "token": "provider-access"}"#]),
            "routes[0].token",
            "\"provider-access\" needs \"provider\": \"microsoft.com\" (password sign-in has no Microsoft token)"),
        ProblemCase(
            microsoftRoute(#""token": "provider-access", "scopes": ["User.Read", "Calendars.Read"]"#),
            "routes[0].scopes",
            "\"Calendars.Read\" not in account.scopes; Firebase returns one Microsoft token, for the account's scopes"),
        ProblemCase(
            microsoftRoute(#""token": "provider-access", "scopes": ["openid"]"#), "routes[0].scopes[0]",
            "\"openid\" is an OpenID Connect scope, added automatically at sign-in; remove it"),
    ]

    @Test(arguments: accountCases + routeCases)
    func reportsProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }
}
