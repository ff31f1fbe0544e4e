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

/// Every problem the top level of routes.json can have, with its exact wording.
@Suite struct DocumentProblemTests {
    typealias F = ConfigurationFixture

    static let cases: [ProblemCase] = [
        // The document itself.
        ProblemCase("[]", "$", "must be an object"),
        ProblemCase(F.document(#""listn": "127.0.0.1:8080""#), "listn", "unknown key (did you mean \"listen\"?)"),
        ProblemCase(F.document(#""colour": "blue""#), "colour", "unknown key"),
        // listen
        ProblemCase(
            F.document(#""listen": 8080"#), "listen",
            "must be a string (\"host:port\" or \"unix:PATH\") or an array of them"),
        ProblemCase(
            F.document(#""listen": ["127.0.0.1:8080", "unix:/run/bp/"]"#), "listen[1]",
            "a socket path must end in a file name, not \"/\", \".\" or \"..\""),
        ProblemCase(
            F.document(#""listen": "localhost""#), "listen",
            "must be \"host:port\" such as \"127.0.0.1:8080\" (IPv6 as \"[::1]:8080\") or \"unix:PATH\""),
        ProblemCase(
            F.document(#""listen": "::1:8080""#), "listen",
            "must be \"host:port\" such as \"127.0.0.1:8080\" (IPv6 as \"[::1]:8080\") or \"unix:PATH\""),
        ProblemCase(
            F.document(#""listen": "127.0.0.1:65536""#), "listen",
            "must be \"host:port\" such as \"127.0.0.1:8080\" (IPv6 as \"[::1]:8080\") or \"unix:PATH\""),
        // account and routes, as wholes
        ProblemCase(#"{"routes": [\#(F.route)]}"#, "account", "is required"),
        ProblemCase(#"{"account": "dev", "routes": [\#(F.route)]}"#, "account", "must be an object"),
        ProblemCase(#"{"account": {"flow": "dev"}}"#, "routes", "is required"),
        ProblemCase(#"{"account": {"flow": "dev"}, "routes": {}}"#, "routes", "must be an array"),
        ProblemCase(#"{"account": {"flow": "dev"}, "routes": []}"#, "routes", "must list at least one route"),
        ProblemCase(#"{"account": {"flow": "dev"}, "routes": ["/api"]}"#, "routes[0]", "must be an object"),
        // tls
        ProblemCase(F.document(#""tls": "ca.pem""#), "tls", "must be an object"),
        ProblemCase(
            F.document(#""tls": {"cafile": "ca.pem"}"#), "tls.cafile", "unknown key (did you mean \"caFile\"?)"),
        ProblemCase(F.document(#""tls": {"caFile": ""}"#), "tls.caFile", "must not be empty"),
        ProblemCase(F.document(#""tls": {"caFile": 1}"#), "tls.caFile", "must be a string"),
        ProblemCase(
            F.document(#""tls": {"caFile": "/nonexistent/ca.pem"}"#), "tls.caFile",
            "file \"/nonexistent/ca.pem\" does not exist"),
        ProblemCase(
            F.document(#""tls": {"caFile": "nonexistent/ca.pem"}"#), "tls.caFile",
            "file \"nonexistent/ca.pem\" (/nonexistent/ca.pem) does not exist"),
        ProblemCase(F.document(#""tls": {"caFile": "/tmp"}"#), "tls.caFile", "\"/tmp\" is a directory, not a file"),
        // allowedHosts
        ProblemCase(F.document(#""allowedHosts": "dev.local""#), "allowedHosts", "must be an array"),
        ProblemCase(F.document(#""allowedHosts": [1]"#), "allowedHosts[0]", "must be a string"),
        ProblemCase(F.document(#""allowedHosts": [""]"#), "allowedHosts[0]", "must not be empty"),
        ProblemCase(
            F.document(#""allowedHosts": ["ok.local", "dev.local:8080"]"#), "allowedHosts[1]",
            "must be a host name without a port (every port is accepted)"),
        ProblemCase(
            F.document(#""allowedHosts": ["[::1]:8080"]"#), "allowedHosts[0]",
            "must be a host name without a port (every port is accepted)"),
        ProblemCase(
            F.document(#""allowedHosts": ["*.dev.local"]"#), "allowedHosts[0]",
            "must be an exact host name (wildcards are not supported)"),
        ProblemCase(
            F.document(#""allowedHosts": ["http://dev.local"]"#), "allowedHosts[0]",
            "is not a valid host name or IP address"),
        ProblemCase(
            F.document(#""allowedHosts": ["127.1"]"#), "allowedHosts[0]", "is not a valid host name or IP address"),
        // allowedOrigins
        ProblemCase(
            F.document(#""allowedOrigins": ["*"]"#), "allowedOrigins[0]",
            "must be an exact origin; \"*\" would let any web page in"),
        ProblemCase(
            F.document(#""allowedOrigins": ["null"]"#), "allowedOrigins[0]",
            "\"null\" is not allowed (sandboxed and file: pages all send it)"),
        ProblemCase(
            F.document(#""allowedOrigins": ["localhost:3000"]"#), "allowedOrigins[0]",
            "must be an origin such as \"http://localhost:3000\""),
        ProblemCase(
            F.document(#""allowedOrigins": ["ftp://files.local"]"#), "allowedOrigins[0]",
            "must be an http or https origin"),
        ProblemCase(
            F.document(#""allowedOrigins": ["http://localhost:3000/app"]"#), "allowedOrigins[0]",
            "must be only scheme://host[:port], without a path (RFC 6454)"),
        // allowRemote, requireKey
        ProblemCase(F.document(#""allowRemote": "yes""#), "allowRemote", "must be true or false"),
        ProblemCase(F.document(#""requireKey": 1"#), "requireKey", "must be true or false"),
        ProblemCase(
            F.document(#""requireKey": true"#), "requireKey", "environment variable BEARER_PROXY_KEY is not set"),
        ProblemCase(
            F.document(#""requireKey": true"#), "requireKey", "environment variable BEARER_PROXY_KEY is empty",
            environment: ["BEARER_PROXY_KEY": ""]),
    ]

    @Test(arguments: cases)
    func reportsProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }

    /// Syntax errors: one problem at `$`, saying where the document stops being JSON (JSONSyntax's wording).
    static let syntaxCases: [ProblemCase] = [
        ProblemCase("{\"listen\": }", "$", "not valid JSON: expected a value at line 1, column 12"),
        ProblemCase(
            "{\n  \"listen\": \"127.0.0.1:8080\"\n  \"routes\": []\n}", "$",
            "not valid JSON: expected ',' or '}' at line 3, column 3"),
        ProblemCase("", "$", "not valid JSON: the document is empty"),
        ProblemCase("{\"a\": \"caf\u{E9}\", \"b\": x}", "$", "not valid JSON: expected a value at line 1, column 20"),
    ]

    @Test(arguments: syntaxCases)
    func reportsSyntaxError(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json) == problemCase.expected)
    }
}
