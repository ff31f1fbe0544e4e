import Foundation
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

/// Valid documents become the values the data plane uses, with every default filled in.
@Suite struct ConfigurationParsingTests {
    typealias F = ConfigurationFixture

    @Test func minimalDocumentGetsTheDefaults() throws {
        let configuration = try F.parse(F.document())
        #expect(configuration.listeners == [.tcp(ListenAddress(host: "127.0.0.1", port: 8080))])
        #expect(configuration.account.flow == .dev)
        #expect(configuration.account.settings == .dev())
        #expect(configuration.tls == TLSSettings(caFile: nil))
        #expect(configuration.allowedHosts == [])
        #expect(configuration.allowedOrigins == [])
        #expect(configuration.allowRemote == false)
        #expect(configuration.requireKey == false)

        let route = try #require(configuration.routes.routes.first)
        #expect(route.prefix == "/api")
        #expect(route.upstream.url == "https://api.example.com")
        #expect(route.auth == .bearer(ScopeSet(["api://example/Data.Read"])))
        #expect(route.headers == .empty)
        #expect(route.timeout == nil)
        #expect(route.methods == nil)
        #expect(route.allowInsecureUpstream == false)
        #expect(route.forwardedHeaders == false)
        #expect(route.tls.caFile == nil)
    }

    @Test func topLevelSettingsAreNormalized() throws {
        let configuration = try F.parse(
            F.document(
                #"""
                "listen": "[::1]:9000", "allowRemote": true, "requireKey": true,
                "allowedHosts": ["Dev.Local", "[fe80::1]", "10.0.0.5", "dev.local"],
                "allowedOrigins": ["HTTP://LocalHost:3000/", "https://app.example.com:443", "http://[::1]:80"]
                """#),
            environment: ["BEARER_PROXY_KEY": "k"])
        #expect(configuration.listeners == [.tcp(ListenAddress(host: "::1", port: 9000))])
        #expect(configuration.allowRemote)
        #expect(configuration.requireKey)
        #expect(configuration.allowedHosts == ["dev.local", "fe80::1", "10.0.0.5"])
        #expect(configuration.allowedOrigins == ["http://localhost:3000", "https://app.example.com", "http://[::1]"])
    }

    @Test func routeOptionsAreRead() throws {
        let configuration = try F.parse(
            F.document(
                #""tls": {"caFile": "\#(F.existingFile)"}"#,
                routes: [
                    #"""
                    {"prefix": "/todo", "upstream": "http://intranet.example/api/", "allowInsecureUpstream": true,
                     "scopes": ["api://todo/ToDoList.Read", "api://todo/ToDoList.Read"],
                     "headers": {"set": {"x-b": "2", "X-A": "1"}, "remove": ["Cookie", "cookie", "X-Debug"]},
                     "timeoutSeconds": 2.5, "methods": ["get", "POST", "GET"], "forwardedHeaders": true}
                    """#,
                    #"{"prefix": "/", "upstream": "https://[2001:db8::1]:8443", "auth": "none", "tls": {}}"#,
                ]))
        let todo = configuration.routes.routes[0]
        #expect(todo.upstream.basePath == "/api")
        #expect(todo.allowInsecureUpstream)
        #expect(todo.auth == .bearer(ScopeSet(["api://todo/ToDoList.Read"])))
        #expect(todo.headers.set == [HeaderField(name: "X-A", value: "1"), HeaderField(name: "x-b", value: "2")])
        #expect(todo.headers.remove == ["cookie", "x-debug"])
        #expect(todo.timeout == .milliseconds(2500))
        #expect(todo.methods == ["GET", "POST"])
        #expect(todo.forwardedHeaders)
        #expect(todo.tls.caFile == F.existingFile)

        let root = configuration.routes.routes[1]
        #expect(root.auth == RouteAuth.none)
        #expect(root.upstream.hostHeader == "[2001:db8::1]:8443")
        #expect(root.tls.caFile == F.existingFile)
    }

    @Test func discoveredRoutesGetTheirSettingsAndNoTokenKey() throws {
        let configuration = try F.parse(
            F.document(routes: [
                #"{"prefix": "/mcp", "upstream": "https://mcp.example.com/mcp", "auth": "discover"}"#,
                #"{"prefix": "/t", "upstream": "https://t.example.com", "auth": "discover", "discovery": "#
                    + #"{"clientId": "app", "redirectPort": 8400, "allowPrivateAddresses": true}}"#,
            ]))
        let routes = configuration.routes.routes
        #expect(routes[0].auth == .discover(DiscoverySettings()))
        #expect(
            routes[1].auth
                == .discover(DiscoverySettings(clientID: "app", redirectPort: 8400, allowPrivateAddresses: true)))
        // A discovered route never shares the account's token cache (#25: audience isolation).
        #expect(routes.allSatisfy { $0.auth.tokenKey == nil && $0.auth.scopes == nil })
    }

    @Test func loopbackHttpUpstreamNeedsNoOptIn() throws {
        for url in ["http://localhost:3000", "http://127.0.0.2", "http://[::1]:8080/x"] {
            let json = F.route(#""prefix": "/a", "upstream": "\#(url)", "scopes": ["User.Read"]"#)
            #expect(F.problems(json) == [], "\(url)")
        }
    }

    @Test func loadResolvesRelativeFilesAgainstTheConfigDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: directory.appendingPathComponent("ca.pem"))
        let path = directory.appendingPathComponent("routes.json").path
        try Data(F.document(#""tls": {"caFile": "ca.pem"}"#).utf8).write(to: URL(fileURLWithPath: path))

        let configuration = try Configuration.load(path: path, environment: [:])
        #expect(configuration.tls.caFile == directory.appendingPathComponent("ca.pem").standardizedFileURL.path)
        #expect(configuration.routes.routes[0].tls.caFile == configuration.tls.caFile)
    }

    @Test func loadReportsAMissingFile() {
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(path: "/nonexistent/routes.json", environment: [:])
        }
        do {
            _ = try Configuration.load(path: "/nonexistent/routes.json", environment: [:])
        } catch {
            #expect(
                error.problems == [
                    ConfigurationProblem(path: "$", message: "file \"/nonexistent/routes.json\" does not exist")
                ])
        }
    }

    @Test func oneBadFileReportsEveryMistakeWithItsPath() {
        let json = #"""
            {
              "listen": "localhost",
              "acount": {},
              "account": {"flow": "device-code", "authority": "https://login.microsoftonline.com/common"},
              "routes": [
                {"prefix": "/graph/", "upstream": "https://graph.microsoft.com/v1.0", "scope": ["User.Read"]},
                {"prefix": "/todo", "upstream": "http://api.contoso.com",
                 "scopes": ["api://a/X.Read", "api://b/X.Read"]},
                {"prefix": "/todo", "upstream": "https://api.contoso.com", "scopes": ["openid"], "methods": ["TRACE"]}
              ]
            }
            """#
        let problems = F.problems(json).map(\.description)
        #expect(
            problems == [
                "acount: unknown key (did you mean \"account\"?)",
                "listen: must be \"host:port\" such as \"127.0.0.1:8080\" (IPv6 as \"[::1]:8080\") or \"unix:PATH\"",
                "account.clientId: is required",
                "routes[0].scope: unknown key (did you mean \"scopes\"?)",
                "routes[0].prefix: must not end with \"/\" (write \"/graph\", not \"/graph/\")",
                "routes[0].scopes: is required: the scopes of the token this route sends, e.g. [\"User.Read\"]",
                "routes[1].upstream: must be an absolute https URL (http is allowed only for loopback hosts or "
                    + "with \"allowInsecureUpstream\": true)",
                "routes[1].scopes: spans 2 resources (api://a, api://b); the identity platform issues one token per "
                    + "resource — use one route per resource",
                "routes[2].prefix: \"/todo\" is already the prefix of routes[1]",
                "routes[2].scopes[0]: \"openid\" is an OpenID Connect scope, added automatically at sign-in; remove it",
                "routes[2].methods[0]: TRACE is not allowed: it would echo the injected token back to the client",
            ])
    }

    @Test func errorDescriptionListsOneProblemPerLine() {
        let error = ConfigurationError(problems: [
            ConfigurationProblem(path: "listen", message: "must be a string"),
            ConfigurationProblem(path: "routes", message: "is required"),
        ])
        #expect(error.description == "listen: must be a string\nroutes: is required")
    }
}
