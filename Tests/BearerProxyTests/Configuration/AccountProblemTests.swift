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

/// Every problem the account can have, flow by flow, with its exact wording.
@Suite struct AccountProblemTests {
    typealias F = ConfigurationFixture

    static let authority = #""authority": "https://login.microsoftonline.com/organizations""#
    static let ciamAuthority = #""authority": "https://contoso.ciamlogin.com/contoso.onmicrosoft.com""#
    static let clientId = #""clientId": "00000000-0000-0000-0000-000000000000""#
    static let defaultScopeRoute =
        #"{"prefix": "/graph", "upstream": "https://graph.microsoft.com/v1.0", "#
        + #""scopes": ["https://graph.microsoft.com/.default"]}"#

    /// An account with `members` besides `flow`.
    static func account(_ flow: String, _ members: String, routes: [String] = [F.route]) -> String {
        F.account(#"{"flow": "\#(flow)"\#(members.isEmpty ? "" : ", " + members)}"#, routes: routes)
    }

    /// A device-code account with a valid client and `members`.
    static func deviceCode(_ members: String) -> String {
        account("device-code", "\(authority), \(clientId), \(members)")
    }

    static let generalCases: [ProblemCase] = [
        ProblemCase(
            F.account(#"{}"#), "account.flow",
            "is required (one of \"dev\", \"native\", \"device-code\", \"browser\", \"client-credentials\", "
                + "\"managed-identity\", \"refresh-token\", \"command\", \"static\", \"firebase\")"),
        ProblemCase(
            account("devicecode", ""), "account.flow",
            "must be one of \"dev\", \"native\", \"device-code\", \"browser\", \"client-credentials\", "
                + "\"managed-identity\", \"refresh-token\", \"command\", \"static\", \"firebase\" "
                + "(did you mean \"device-code\"?)"),
        ProblemCase(
            account("dev", clientId), "account.clientId",
            "not used by the \"dev\" flow (only by: native, device-code, browser, client-credentials, "
                + "managed-identity, refresh-token)"),
        ProblemCase(
            deviceCode(#""clientid": "x""#), "account.clientid", "unknown key (did you mean \"clientId\"?)"),
        ProblemCase(
            deviceCode(#""tokenEnv": "SECRET""#), "account.tokenEnv",
            "not used by the \"device-code\" flow (only by: static)"),
    ]

    static let oauthCases: [ProblemCase] = [
        ProblemCase(
            account("device-code", "\(authority), \(clientId), \"issuer\": \"https://id.example.com\""), "account",
            "give either \"authority\" or \"issuer\", not both"),
        ProblemCase(
            account("device-code", clientId), "account",
            "needs \"authority\" (a Microsoft authority) or \"issuer\" (any OpenID Connect issuer)"),
        ProblemCase(account("device-code", #""authority": 1, \#(clientId)"#), "account.authority", "must be a string"),
        ProblemCase(
            account("device-code", #""authority": "login.microsoftonline.com/common", \#(clientId)"#),
            "account.authority",
            "must be an https URL such as \"https://login.microsoftonline.com/organizations\" or "
                + "\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\""),
        ProblemCase(
            account("device-code", #""authority": "http://login.microsoftonline.com/common", \#(clientId)"#),
            "account.authority", "must use https (http is allowed only for loopback hosts)"),
        ProblemCase(
            account("device-code", #""authority": "https://login.microsoftonline.com/my tenant", \#(clientId)"#),
            "account.authority",
            "must be an https URL such as \"https://login.microsoftonline.com/organizations\" or "
                + "\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\""),
        ProblemCase(
            account("device-code", #""authority": "https://login.microsoftonline.com/contoso", \#(clientId)"#),
            "account.authority",
            "must be \"https://login.microsoftonline.com/{tenant}\" with tenant common, organizations, consumers, "
                + "a tenant ID (GUID) or a domain"),
        ProblemCase(
            account("device-code", #""authority": "https://login.microsoftonline.com/common/v2.0", \#(clientId)"#),
            "account.authority",
            "must be \"https://login.microsoftonline.com/{tenant}\" with tenant common, organizations, consumers, "
                + "a tenant ID (GUID) or a domain"),
        ProblemCase(
            account("device-code", #""authority": "https://contoso.ciamlogin.com", \#(clientId)"#), "account.authority",
            "must be \"https://{tenant}.ciamlogin.com/{tenant}\" such as "
                + "\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\""),
        ProblemCase(
            account("device-code", #""authority": "https://accounts.google.com", \#(clientId)"#), "account.authority",
            "must be a Microsoft authority such as \"https://login.microsoftonline.com/organizations\" or "
                + "\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\"; use \"issuer\" for other OpenID Connect "
                + "providers"),
        ProblemCase(
            account("device-code", #""issuer": "accounts.google.com", \#(clientId)"#), "account.issuer",
            "must be an https URL such as \"https://accounts.example.com\""),
        ProblemCase(
            account("device-code", #""issuer": "http://id.example.com", \#(clientId)"#), "account.issuer",
            "must use https (http is allowed only for loopback hosts)"),
        ProblemCase(
            account("device-code", #""issuer": "https://id.example.com?tenant=a", \#(clientId)"#), "account.issuer",
            "must be an https URL such as \"https://accounts.example.com\""),
        ProblemCase(account("device-code", authority), "account.clientId", "is required"),
        ProblemCase(account("device-code", #"\#(authority), "clientId": """#), "account.clientId", "must not be empty"),
        ProblemCase(deviceCode(#""extraParameters": []"#), "account.extraParameters", "must be an object"),
        ProblemCase(
            deviceCode(#""extraParameters": {"resource": 1}"#), "account.extraParameters.resource", "must be a string"),
        ProblemCase(
            deviceCode(#""extraParameters": {"client_id": "x"}"#), "account.extraParameters.client_id",
            "is sent by the proxy itself; use \"clientId\""),
        ProblemCase(
            deviceCode(#""extraParameters": {"scope": "x"}"#), "account.extraParameters.scope",
            "is sent by the proxy itself, from the routes' \"scopes\""),
        ProblemCase(
            deviceCode(#""extraParameters": {"State": "x"}"#), "account.extraParameters.State",
            "is sent by the proxy itself"),
        ProblemCase(
            deviceCode(#""extraParameters": {"": "x"}"#), #"account.extraParameters[""]"#,
            "a parameter name must not be empty"),
        ProblemCase(deviceCode(#""clientCapabilities": "cp1""#), "account.clientCapabilities", "must be an array"),
        ProblemCase(deviceCode(#""clientCapabilities": [""]"#), "account.clientCapabilities[0]", "must not be empty"),
        ProblemCase(
            deviceCode(#""tokenType": "jwt""#), "account.tokenType", "must be one of \"bearer\", \"dpop\", \"auto\""),
        ProblemCase(deviceCode(#""tokenType": true"#), "account.tokenType", "must be a string"),
        ProblemCase(
            deviceCode(#""extraParameters": {"dpop_jkt": "x"}"#), "account.extraParameters.dpop_jkt",
            "is sent by the proxy itself with \"tokenType\": \"dpop\""),
        ProblemCase(
            account("native", #"\#(ciamAuthority), \#(clientId), "username": "a@b.c", "tokenType": "dpop""#),
            "account.tokenType",
            "not used by the \"native\" flow (only by: dev, device-code, browser, client-credentials, refresh-token)"),
    ]

    static let nativeCases: [ProblemCase] = [
        ProblemCase(
            account("native", "\(authority), \(clientId), \"username\": \"a@b.c\""), "account.authority",
            "the native flow needs an External ID authority such as "
                + "\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\""),
        ProblemCase(
            account(
                "native", "\(ciamAuthority), \(clientId), \"username\": \"a@b.c\", \"issuer\": \"https://x.example\""),
            "account.issuer",
            "not used by the \"native\" flow (only by: device-code, browser, client-credentials, refresh-token)"),
        ProblemCase(account("native", "\(clientId), \"username\": \"a@b.c\""), "account.authority", "is required"),
        ProblemCase(account("native", "\(ciamAuthority), \(clientId)"), "account.username", "is required"),
        ProblemCase(
            account("native", "\(ciamAuthority), \(clientId), \"username\": \"a@b.c\", \"challenge\": \"sms\""),
            "account.challenge", "must be one of \"password\", \"otp\""),
        ProblemCase(
            account("native", "\(ciamAuthority), \(clientId), \"username\": \"a@b.c\", \"passwordEnv\": \"hunter 2\""),
            "account.passwordEnv",
            "must be the name of an environment variable (letters, digits and \"_\", not starting with a digit), "
                + "not its value"),
        ProblemCase(
            account(
                "native",
                "\(ciamAuthority), \(clientId), \"username\": \"a@b.c\", \"challenge\": \"otp\", "
                    + "\"passwordEnv\": \"PW\""
            ),
            "account.passwordEnv", "only used with \"challenge\": \"password\""),
    ]

    static let browserCases: [ProblemCase] = [
        ProblemCase(
            account("browser", "\(authority), \(clientId), \"prompt\": \"select-account\""), "account.prompt",
            "must be one of \"login\", \"none\", \"consent\", \"select_account\", \"create\" "
                + "(did you mean \"select_account\"?)"),
        ProblemCase(
            account("browser", "\(authority), \(clientId), \"loginHint\": \"\""), "account.loginHint",
            "must not be empty"),
        ProblemCase(
            account("browser", "\(authority), \(clientId), \"domainHint\": 1"), "account.domainHint", "must be a string"
        ),
        ProblemCase(
            account("browser", "\(authority), \(clientId), \"redirectPort\": 70000"), "account.redirectPort",
            "must be an integer from 0 to 65535"),
        ProblemCase(
            account("browser", "\(authority), \(clientId), \"redirectPort\": \"8400\""), "account.redirectPort",
            "must be an integer from 0 to 65535"),
        ProblemCase(
            account("browser", "\(authority), \(clientId), \"extraParameters\": {\"login_hint\": \"a@b.c\"}"),
            "account.extraParameters.login_hint", "use \"loginHint\" instead"),
    ]

    static func clientCredentials(_ members: String, routes: [String] = [defaultScopeRoute]) -> String {
        account(
            "client-credentials", "\(authority), \(clientId)\(members.isEmpty ? "" : ", " + members)", routes: routes)
    }

    static let clientCredentialsCases: [ProblemCase] = [
        ProblemCase(
            clientCredentials(#""clientSecretEnv": "SECRET", "certificate": {"certFile": "a", "keyFile": "b"}"#),
            "account", "give only one of \"clientSecretEnv\", \"certificate\" and \"clientAssertion\""),
        ProblemCase(
            clientCredentials(#""certificate": {"certFile": "a", "keyFile": "b"}, "clientAssertion": {"file": "t"}"#),
            "account", "give only one of \"clientSecretEnv\", \"certificate\" and \"clientAssertion\""),
        ProblemCase(
            clientCredentials(""), "account",
            "the client-credentials flow needs \"clientSecretEnv\", \"certificate\" or \"clientAssertion\""),
        ProblemCase(
            clientCredentials(#""clientAssertion": "token.jwt""#), "account.clientAssertion", "must be an object"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {}"#), "account.clientAssertion",
            "needs one of \"file\", \"fileEnv\", \"tokenEnv\" or \"command\""),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"file": "\#(F.existingFile)", "tokenEnv": "SECRET"}"#),
            "account.clientAssertion", "give only one of \"file\", \"fileEnv\", \"tokenEnv\" and \"command\""),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"file": "/nonexistent/token"}"#), "account.clientAssertion.file",
            "file \"/nonexistent/token\" does not exist"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"file": ""}"#), "account.clientAssertion.file",
            "must not be empty"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"fileEnv": "TOKEN_FILE"}"#), "account.clientAssertion.fileEnv",
            "file \"/nonexistent/token\", named by TOKEN_FILE, does not exist",
            environment: ["TOKEN_FILE": "/nonexistent/token"]),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"fileEnv": "MISSING"}"#), "account.clientAssertion.fileEnv",
            "environment variable MISSING is not set"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"tokenEnv": "EMPTY"}"#), "account.clientAssertion.tokenEnv",
            "environment variable EMPTY is empty"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"tokenEnv": "eyJhbGciOi.x.y"}"#),
            "account.clientAssertion.tokenEnv",
            "must be the name of an environment variable (letters, digits and \"_\", not starting with a digit), "
                + "not its value"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"command": []}"#), "account.clientAssertion.command",
            "must not be empty: give the program and its arguments"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"command": ["", "x"]}"#), "account.clientAssertion.command[0]",
            "must name the program to run"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"command": ["cat", 1]}"#), "account.clientAssertion.command[1]",
            "must be a string"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"tokenEnv": "SECRET", "timeoutSeconds": 5}"#),
            "account.clientAssertion.timeoutSeconds", "applies to \"command\" only"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"tokenEnv": "SECRET", "files": "x"}"#),
            "account.clientAssertion.files", "unknown key (did you mean \"file\"?)"),
        ProblemCase(
            clientCredentials(#""clientAssertion": {"tokenEnv": "SECRET"}, "clientAuthentication": "basic""#),
            "account.clientAuthentication", "applies to a client secret, not a client assertion"),
        ProblemCase(
            clientCredentials(#""clientSecretEnv": "MISSING""#), "account.clientSecretEnv",
            "environment variable MISSING is not set"),
        ProblemCase(
            clientCredentials(#""clientSecretEnv": "EMPTY""#), "account.clientSecretEnv",
            "environment variable EMPTY is empty"),
        ProblemCase(
            clientCredentials(#""clientSecretEnv": "Abc~123.secret""#), "account.clientSecretEnv",
            "must be the name of an environment variable (letters, digits and \"_\", not starting with a digit), "
                + "not its value"),
        ProblemCase(clientCredentials(#""certificate": "cert.pem""#), "account.certificate", "must be an object"),
        ProblemCase(
            clientCredentials(#""certificate": {"certFile": "\#(F.existingFile)"}"#), "account.certificate.keyFile",
            "is required"),
        ProblemCase(
            clientCredentials(#""certificate": {"certFile": "/nonexistent/c.pem", "keyFile": "\#(F.existingFile)"}"#),
            "account.certificate.certFile", "file \"/nonexistent/c.pem\" does not exist"),
        ProblemCase(
            clientCredentials(
                #""certificate": {"certFile": "\#(F.existingFile)", "keyFile": "\#(F.existingFile)", "#
                    + #""password": "x"}"#),
            "account.certificate.password", "unknown key"),
        ProblemCase(
            clientCredentials(#""clientSecretEnv": "SECRET""#, routes: [F.route]), "routes[0].scopes",
            "the client-credentials flow takes exactly one scope, \"{resource}/.default\" "
                + "(e.g. [\"https://graph.microsoft.com/.default\"])"),
        ProblemCase(
            clientCredentials(
                #""clientSecretEnv": "SECRET""#,
                routes: [
                    #"{"prefix": "/g", "upstream": "https://graph.microsoft.com", "scopes": ["User.Read", ".default"]}"#
                ]),
            "routes[0].scopes",
            "the client-credentials flow takes exactly one scope, \"{resource}/.default\" "
                + "(e.g. [\"https://graph.microsoft.com/.default\"])"),
    ]

    static let otherFlowCases: [ProblemCase] = [
        ProblemCase(account("refresh-token", "\(authority), \(clientId)"), "account.refreshTokenEnv", "is required"),
        ProblemCase(
            account("refresh-token", "\(authority), \(clientId), \"refreshTokenEnv\": \"RT\""),
            "account.refreshTokenEnv",
            "environment variable RT is not set"),
        ProblemCase(account("static", ""), "account.tokenEnv", "is required"),
        ProblemCase(
            account("static", #""tokenEnv": "GITHUB_TOKEN""#), "account.tokenEnv",
            "environment variable GITHUB_TOKEN is not set"),
        ProblemCase(account("static", #""tokenEnv": 1"#), "account.tokenEnv", "must be a string"),
        ProblemCase(account("command", ""), "account.command", "is required"),
        ProblemCase(
            account("command", #""command": "az account get-access-token""#), "account.command", "must be an array"),
        ProblemCase(
            account("command", #""command": []"#), "account.command",
            "must not be empty: give the program and its arguments"),
        ProblemCase(account("command", #""command": ["", "x"]"#), "account.command[0]", "must name the program to run"),
        ProblemCase(account("command", #""command": ["az", 1]"#), "account.command[1]", "must be a string"),
        ProblemCase(
            account("command", #""command": ["az", "--scope", "{scope}"]"#), "account.command[2]",
            "unknown placeholder \"{scope}\" (did you mean \"{scopes}\"?); only {scopes} and {resource} are substituted"
        ),
        ProblemCase(
            account("command", #""command": ["tok", "{audience}"]"#), "account.command[1]",
            "unknown placeholder \"{audience}\"; only {scopes} and {resource} are substituted"),
        ProblemCase(
            account("command", #""command": ["az"], "timeoutSeconds": -1"#), "account.timeoutSeconds",
            "must be a number of seconds greater than 0 and at most 86400"),
    ]

    @Test(arguments: generalCases + oauthCases + nativeCases + browserCases)
    func reportsOAuthProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }

    /// A managed-identity account with `members`, and the scope route it needs.
    static func managedIdentity(_ members: String) -> String {
        account("managed-identity", members, routes: [defaultScopeRoute])
    }

    static let managedIdentityCases: [ProblemCase] = [
        ProblemCase(
            managedIdentity(#""protocol": "app-service", "endpoint": "http://127.0.0.1:41000/msi/token""#),
            "account.protocol", "environment variable IDENTITY_HEADER is not set"),
        ProblemCase(
            managedIdentity(""), "account",
            "IDENTITY_ENDPOINT is set, so the app-service protocol is used, but environment variable IDENTITY_HEADER "
                + "is not set (give \"protocol\": \"imds\" for the instance metadata service)",
            environment: ["IDENTITY_ENDPOINT": "http://127.0.0.1:41000/msi/token"]),
        ProblemCase(
            managedIdentity(""), "account",
            "environment variable IDENTITY_ENDPOINT must use https (http is allowed only for loopback and link-local "
                + "addresses, where the platform's endpoints are); it is \"http://10.0.0.4:8081/msi/token\"",
            environment: ["IDENTITY_ENDPOINT": "http://10.0.0.4:8081/msi/token", "IDENTITY_HEADER": F.secretValue]),
        ProblemCase(
            managedIdentity(#""protocol": "imds", "endpoint": "ftp://127.0.0.1/token""#), "account.endpoint",
            "\"endpoint\" must be an http(s) URL without a query, such as "
                + "\"http://169.254.169.254/metadata/identity/oauth2/token\"; it is \"ftp://127.0.0.1/token\""),
        ProblemCase(
            managedIdentity(#""endpoint": "https://id.example.com/token?api-version=1""#), "account.endpoint",
            "\"endpoint\" must be an http(s) URL without a query, such as "
                + "\"http://169.254.169.254/metadata/identity/oauth2/token\"; it is "
                + "\"https://id.example.com/token?api-version=1\""),
        ProblemCase(
            managedIdentity(#""endpoint": "http://id.example.com/token""#), "account.endpoint",
            "\"endpoint\" must use https (http is allowed only for loopback and link-local addresses, where the "
                + "platform's endpoints are); it is \"http://id.example.com/token\""),
        ProblemCase(
            managedIdentity(#""protocol": "msi""#), "account.protocol", "must be one of \"app-service\", \"imds\""),
        ProblemCase(
            managedIdentity(#""clientId": "my-identity""#), "account.clientId",
            "must be a GUID such as \"00001111-aaaa-2222-bbbb-3333cccc4444\""),
        ProblemCase(
            managedIdentity(#""objectId": """#), "account.objectId", "must not be empty"),
        ProblemCase(
            managedIdentity(#""resourceId": "my-identity""#), "account.resourceId",
            "must be the identity's Azure resource id, \"/subscriptions/{subscription}/resourceGroups/{group}/"
                + "providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}\""),
        ProblemCase(
            managedIdentity(#"\#(clientId), "objectId": "00000000-0000-0000-0000-000000000001""#), "account",
            "give at most one of \"clientId\", \"objectId\" and \"resourceId\" (one user-assigned identity)"),
        ProblemCase(
            managedIdentity(#""clientSecretEnv": "SECRET""#), "account.clientSecretEnv",
            "not used by the \"managed-identity\" flow (only by: client-credentials)"),
        ProblemCase(
            account("managed-identity", ""), "routes[0].scopes",
            "the managed-identity flow takes exactly one scope, \"{resource}/.default\" "
                + "(e.g. [\"https://graph.microsoft.com/.default\"])"),
    ]

    @Test(arguments: clientCredentialsCases + otherFlowCases + managedIdentityCases)
    func reportsOtherFlowProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }
}
