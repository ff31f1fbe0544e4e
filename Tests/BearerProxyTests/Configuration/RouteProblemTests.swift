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

/// Every problem a route can have, with its exact wording.
@Suite struct RouteProblemTests {
    typealias F = ConfigurationFixture

    static let upstream = #""upstream": "https://api.example.com""#
    static let scopes = #""scopes": ["api://example/Data.Read"]"#

    /// A route with the given prefix and otherwise valid.
    static func prefix(_ prefix: String) -> String { F.route(#""prefix": \#(prefix), \#(upstream), \#(scopes)"#) }

    /// A route with the given upstream and otherwise valid.
    static func upstream(_ url: String) -> String { F.route(#""prefix": "/api", "upstream": \#(url), \#(scopes)"#) }

    /// A route with the given scopes and otherwise valid.
    static func scopes(_ list: String) -> String { F.route(#""prefix": "/api", \#(upstream), "scopes": \#(list)"#) }

    static let prefixCases: [ProblemCase] = [
        ProblemCase(F.routeWith(#""method": ["GET"]"#), "routes[0].method", "unknown key (did you mean \"methods\"?)"),
        ProblemCase(F.route(#"\#(upstream), \#(scopes)"#), "routes[0].prefix", "is required"),
        ProblemCase(prefix("42"), "routes[0].prefix", "must be a string"),
        ProblemCase(prefix(#""api""#), "routes[0].prefix", "must start with \"/\""),
        ProblemCase(
            prefix(#""/api/""#), "routes[0].prefix", "must not end with \"/\" (write \"/graph\", not \"/graph/\")"),
        ProblemCase(
            prefix(#""/a%2Fb""#), "routes[0].prefix",
            "must not contain \"%\", \"?\" or \"#\" (a prefix is a literal, unencoded path)"),
        ProblemCase(
            prefix(#""/api?x=1""#), "routes[0].prefix",
            "must not contain \"%\", \"?\" or \"#\" (a prefix is a literal, unencoded path)"),
        ProblemCase(
            prefix(#""/my api""#), "routes[0].prefix",
            "contains a space, which is not allowed in a URL path (RFC 3986 §3.3)"),
        ProblemCase(
            prefix(#""/caf\u00e9""#), "routes[0].prefix",
            "contains \"é\", which is not allowed in a URL path (RFC 3986 §3.3)"),
        ProblemCase(prefix(#""/a//b""#), "routes[0].prefix", "must not contain an empty segment (\"//\")"),
        ProblemCase(prefix(#""/a/../b""#), "routes[0].prefix", "must not contain \".\" or \"..\" segments"),
        ProblemCase(prefix(#""/.""#), "routes[0].prefix", "must not contain \".\" or \"..\" segments"),
        ProblemCase(
            prefix(#""/-/status""#), "routes[0].prefix",
            "\"/-\" and everything under \"/-/\" are reserved for the proxy's own endpoints"),
        ProblemCase(
            prefix(#""/-""#), "routes[0].prefix",
            "\"/-\" and everything under \"/-/\" are reserved for the proxy's own endpoints"),
        ProblemCase(
            F.document(routes: [F.route, F.route]), "routes[1].prefix", "\"/api\" is already the prefix of routes[0]"),
    ]

    static let upstreamCases: [ProblemCase] = [
        ProblemCase(F.route(#""prefix": "/api", \#(scopes)"#), "routes[0].upstream", "is required"),
        ProblemCase(upstream("true"), "routes[0].upstream", "must be a string"),
        ProblemCase(
            upstream(#""api.example.com""#), "routes[0].upstream",
            "must be an absolute URL such as \"https://api.example.com/v1\""),
        ProblemCase(
            upstream(#""/v1/things""#), "routes[0].upstream",
            "must be an absolute URL such as \"https://api.example.com/v1\""),
        ProblemCase(
            upstream(#""https://""#), "routes[0].upstream",
            "must be an absolute URL such as \"https://api.example.com/v1\""),
        ProblemCase(
            upstream(#""https://api.example.com/a b""#), "routes[0].upstream",
            "must not contain spaces or control characters"),
        ProblemCase(
            upstream(#""https://-api-.example.com""#), "routes[0].upstream",
            "does not name a valid host (a DNS name, an IPv4 address or [IPv6])"),
        ProblemCase(
            upstream(#""https://[::g]:443""#), "routes[0].upstream",
            "does not name a valid host (a DNS name, an IPv4 address or [IPv6])"),
        ProblemCase(
            upstream(#""https://api.example.com:99999""#), "routes[0].upstream",
            "has an invalid port (use 1 to 65535)"),
        ProblemCase(
            upstream(#""https://api.example.com:0""#), "routes[0].upstream", "has an invalid port (use 1 to 65535)"),
        ProblemCase(
            upstream(#""https://api.example.com/a<b""#), "routes[0].upstream",
            "path contains \"<\", which must be percent-encoded (RFC 3986 §3.3)"),
        ProblemCase(
            upstream(#""https://api.example.com/a%zz""#), "routes[0].upstream",
            "path has a \"%\" that does not start a %XX escape"),
        ProblemCase(
            upstream(#""ftp://files.example.com""#), "routes[0].upstream",
            "must use https (or http for loopback hosts or with \"allowInsecureUpstream\": true)"),
        ProblemCase(
            upstream(#""https://user:pw@api.example.com""#), "routes[0].upstream",
            "must not contain user information (\"user@\"); credentials never go in routes.json"),
        ProblemCase(
            upstream(#""https://api.example.com/v1?x=1""#), "routes[0].upstream",
            "must not contain a query (\"?\"); the request's own query string is forwarded"),
        ProblemCase(
            upstream(#""https://api.example.com/v1#top""#), "routes[0].upstream",
            "must not contain a fragment (\"#\")"),
        ProblemCase(
            upstream(#""https://api.example.com/v1/%2E%2E/admin""#), "routes[0].upstream",
            "path must not contain \".\" or \"..\" segments"),
        ProblemCase(
            upstream(#""http://api.example.com""#), "routes[0].upstream",
            "must be an absolute https URL (http is allowed only for loopback hosts or with "
                + "\"allowInsecureUpstream\": true)"),
        ProblemCase(
            F.routeWith(#""allowInsecureUpstream": "true""#), "routes[0].allowInsecureUpstream", "must be true or false"
        ),
    ]

    static let scopeCases: [ProblemCase] = [
        ProblemCase(
            F.route(#""prefix": "/api", \#(upstream)"#), "routes[0].scopes",
            "is required: the scopes of the token this route sends, e.g. [\"User.Read\"]"),
        ProblemCase(scopes(#""User.Read""#), "routes[0].scopes", "must be an array"),
        ProblemCase(scopes("[]"), "routes[0].scopes", "must list at least one scope"),
        ProblemCase(scopes("[1]"), "routes[0].scopes[0]", "must be a string"),
        ProblemCase(scopes(#"["User.Read", ""]"#), "routes[0].scopes[1]", "must not be empty"),
        ProblemCase(
            scopes(#"["User.Read Mail.Read"]"#), "routes[0].scopes[0]",
            "must be a single scope: printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)"),
        ProblemCase(
            scopes(#"["https://graph.microsoft.com"]"#), "routes[0].scopes[0]",
            "names a resource but no permission (did you mean \"https://graph.microsoft.com/.default\"?)"),
        ProblemCase(
            scopes(#"["api://todo/"]"#), "routes[0].scopes[0]",
            "names a resource but no permission (did you mean \"api://todo/.default\"?)"),
        ProblemCase(
            scopes(#"["/User.Read"]"#), "routes[0].scopes[0]",
            "must be \"{resource}/{permission}\" or a bare permission such as \"User.Read\""),
        ProblemCase(
            scopes(#"["User.Read", "openid"]"#), "routes[0].scopes[1]",
            "\"openid\" is an OpenID Connect scope, added automatically at sign-in; remove it"),
        ProblemCase(
            scopes(#"["offline_access"]"#), "routes[0].scopes[0]",
            "\"offline_access\" is an OpenID Connect scope, added automatically at sign-in; remove it"),
        ProblemCase(
            F.document(routes: [
                F.route, #"{"prefix": "/b", \#(upstream), "scopes": ["api://a/X.Read", "api://b/X.Read"]}"#,
            ]),
            "routes[1].scopes",
            "spans 2 resources (api://a, api://b); the identity platform issues one token per resource — "
                + "use one route per resource"),
        ProblemCase(
            scopes(#"["User.Read", "api://todo/ToDoList.Read"]"#), "routes[0].scopes",
            "spans 2 resources (api://todo, https://graph.microsoft.com); the identity platform issues one token "
                + "per resource — use one route per resource"),
    ]

    static let authCases: [ProblemCase] = [
        ProblemCase(
            F.routeWith(#""auth": "Bearer""#), "routes[0].auth",
            "must be one of \"bearer\", \"none\", \"discover\", \"on-behalf-of\" (did you mean \"bearer\"?)"),
        ProblemCase(
            F.routeWith(#""auth": "none""#), "routes[0].scopes", "not used with \"auth\": \"none\" (no token is sent)"),
        ProblemCase(
            F.route(#""prefix": "/api", \#(upstream), "auth": "none", "token": "firebase-id""#), "routes[0].token",
            "not used with \"auth\": \"none\" (no token is sent)"),
        ProblemCase(F.routeWith(#""token": "firebase-id""#), "routes[0].token", "only used with the \"firebase\" flow"),
        ProblemCase(
            F.routeWith(#""auth": "discover""#), "routes[0].scopes",
            "not used with \"auth\": \"discover\" (the upstream's challenge or metadata names them)"),
        ProblemCase(
            discover(#""token": "firebase-id""#), "routes[0].token",
            "not used with \"auth\": \"discover\" (the upstream's authorization server issues it)"),
        ProblemCase(
            F.routeWith(#""discovery": {}"#), "routes[0].discovery", "only used with \"auth\": \"discover\""),
        ProblemCase(discover(#""discovery": []"#), "routes[0].discovery", "must be an object"),
        ProblemCase(
            discover(#""discovery": {"clientID": "a"}"#), "routes[0].discovery.clientID",
            "unknown key (did you mean \"clientId\"?)"),
        ProblemCase(discover(#""discovery": {"clientId": ""}"#), "routes[0].discovery.clientId", "must not be empty"),
        ProblemCase(
            discover(#""discovery": {"redirectPort": -1}"#), "routes[0].discovery.redirectPort",
            "must be an integer from 0 to 65535"),
        ProblemCase(
            discover(#""discovery": {"allowPrivateAddresses": 1}"#), "routes[0].discovery.allowPrivateAddresses",
            "must be true or false"),
        ProblemCase(
            discover(#""discovery": {"clientMetadataDocument": "http://app.example.com/c.json"}"#),
            "routes[0].discovery.clientMetadataDocument",
            "must be an https URL with a path, such as \"https://app.example.com/client.json\""),
        ProblemCase(
            discover(#""discovery": {"clientMetadataDocument": "https://app.example.com/"}"#),
            "routes[0].discovery.clientMetadataDocument",
            "must be an https URL with a path, such as \"https://app.example.com/client.json\""),
        ProblemCase(
            discover(#""discovery": {"clientId": "a", "clientMetadataDocument": "https://app.example.com/c.json"}"#),
            "routes[0].discovery.clientMetadataDocument", "use \"clientId\" or \"clientMetadataDocument\", not both"),
        ProblemCase(
            discover(#""discovery": {"clientId": "a", "clientSecretEnv": "MCP_SECRET"}"#),
            "routes[0].discovery.clientSecretEnv", "environment variable MCP_SECRET is not set"),
        ProblemCase(
            discover(#""discovery": {"clientSecretEnv": "MCP_SECRET"}"#), "routes[0].discovery.clientSecretEnv",
            "needs \"clientId\": the secret belongs to a client registered beforehand",
            environment: ["MCP_SECRET": "s"]),
    ]

    /// A discovered route with `extra` members and otherwise valid.
    static func discover(_ extra: String) -> String {
        F.route(#""prefix": "/mcp", "upstream": "https://mcp.example.com/mcp", "auth": "discover", "# + extra)
    }

    static let headerCases: [ProblemCase] = [
        ProblemCase(F.routeWith(#""headers": []"#), "routes[0].headers", "must be an object"),
        ProblemCase(F.routeWith(#""headers": {"add": {}}"#), "routes[0].headers.add", "unknown key"),
        ProblemCase(
            F.routeWith(#""headers": {"sett": {}}"#), "routes[0].headers.sett", "unknown key (did you mean \"set\"?)"),
        ProblemCase(F.routeWith(#""headers": {"set": []}"#), "routes[0].headers.set", "must be an object"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"X Tenant": "a"}}"#), #"routes[0].headers.set["X Tenant"]"#,
            "is not a valid header name (an RFC 9110 token)"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"Authorization": "Basic x"}}"#), "routes[0].headers.set.Authorization",
            "carries the injected token and cannot be set or removed here"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"host": "evil.example"}}"#), "routes[0].headers.set.host",
            "is set from the upstream URL and cannot be set or removed here"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"Content-Length": "0"}}"#), "routes[0].headers.set.Content-Length",
            "describes the message framing and cannot be set or removed here"),
        ProblemCase(
            F.routeWith(#""headers": {"remove": ["Transfer-Encoding"]}"#), "routes[0].headers.remove[0]",
            "describes the message framing and cannot be set or removed here"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"Connection": "close"}}"#), "routes[0].headers.set.Connection",
            "is a hop-by-hop header (RFC 9110 §7.6.1) and cannot be set or removed here"),
        ProblemCase(
            F.routeWith(#""headers": {"remove": ["Proxy-Authorization"]}"#), "routes[0].headers.remove[0]",
            "is a hop-by-hop header (RFC 9110 §7.6.1) and cannot be set or removed here"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"X-Tenant": "a", "x-tenant": "b"}}"#), "routes[0].headers.set.x-tenant",
            "sets the same header as \"X-Tenant\" (header names are case-insensitive)"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"X-Retries": 3}}"#), "routes[0].headers.set.X-Retries", "must be a string"
        ),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"X-Tenant": "a\r\nX-Admin: yes"}}"#), "routes[0].headers.set.X-Tenant",
            "must not contain control characters such as CR, LF or NUL"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"X-Tenant": " a"}}"#), "routes[0].headers.set.X-Tenant",
            "must not start or end with spaces or tabs (RFC 9110 §5.5)"),
        ProblemCase(F.routeWith(#""headers": {"remove": "Cookie"}"#), "routes[0].headers.remove", "must be an array"),
        ProblemCase(
            F.routeWith(#""headers": {"remove": ["Cookie:"]}"#), "routes[0].headers.remove[0]",
            "is not a valid header name (an RFC 9110 token)"),
        ProblemCase(
            F.routeWith(#""headers": {"set": {"X-Tenant": "a"}, "remove": ["x-tenant"]}"#),
            "routes[0].headers.remove[0]",
            "is also in \"set\"; a header is either set or removed"),
    ]

    static let otherCases: [ProblemCase] = [
        ProblemCase(
            F.routeWith(#""timeoutSeconds": 0"#), "routes[0].timeoutSeconds",
            "must be a number of seconds greater than 0 and at most 86400"),
        ProblemCase(
            F.routeWith(#""timeoutSeconds": 86401"#), "routes[0].timeoutSeconds",
            "must be a number of seconds greater than 0 and at most 86400"),
        ProblemCase(
            F.routeWith(#""timeoutSeconds": "30""#), "routes[0].timeoutSeconds",
            "must be a number of seconds greater than 0 and at most 86400"),
        ProblemCase(
            F.routeWith(#""methods": []"#), "routes[0].methods",
            "must list at least one method (leave \"methods\" out to allow every method)"),
        ProblemCase(F.routeWith(#""methods": "GET""#), "routes[0].methods", "must be an array"),
        ProblemCase(F.routeWith(#""methods": ["GET", 1]"#), "routes[0].methods[1]", "must be a string"),
        ProblemCase(
            F.routeWith(#""methods": ["GET", "PO ST"]"#), "routes[0].methods[1]",
            "is not a valid method name (an RFC 9110 token)"),
        ProblemCase(
            F.routeWith(#""methods": ["connect"]"#), "routes[0].methods[0]",
            "CONNECT is not allowed: the proxy does not open tunnels"),
        ProblemCase(
            F.routeWith(#""methods": ["TRACE"]"#), "routes[0].methods[0]",
            "TRACE is not allowed: it would echo the injected token back to the client"),
        ProblemCase(F.routeWith(#""forwardedHeaders": "yes""#), "routes[0].forwardedHeaders", "must be true or false"),
        ProblemCase(F.routeWith(#""tls": {"ca": "x"}"#), "routes[0].tls.ca", "unknown key (did you mean \"caFile\"?)"),
        ProblemCase(
            F.routeWith(#""tls": {"caFile": "/nonexistent/ca.pem"}"#), "routes[0].tls.caFile",
            "file \"/nonexistent/ca.pem\" does not exist"),
    ]

    /// A device-code account asking for `tokenType` (nil: none said).
    static func dpopAccount(_ tokenType: String?) -> String {
        #"{"flow": "device-code", "issuer": "https://as.example.com", "clientId": "cli""#
            + (tokenType.map { #", "tokenType": "\#($0)""# } ?? "") + "}"
    }

    static let tokenTypeCases: [ProblemCase] = [
        ProblemCase(
            F.routeWith(#""tokenType": "jwt""#), "routes[0].tokenType",
            "must be one of \"bearer\", \"dpop\", \"auto\""),
        ProblemCase(
            F.routeWith(#""tokenType": "dpop""#), "routes[0].tokenType",
            "\"dpop\" needs DPoP-bound tokens, and the account asks for bearer tokens: set the account's "
                + "\"tokenType\" to \"dpop\" or \"auto\" (an OAuth or \"dev\" flow's)"),
        ProblemCase(
            F.account(
                dpopAccount(nil),
                routes: [
                    #"{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["s"], "tokenType": "dpop"}"#
                ]),
            "routes[0].tokenType",
            "\"dpop\" needs DPoP-bound tokens, and the account asks for bearer tokens: set the account's "
                + "\"tokenType\" to \"dpop\" or \"auto\" (an OAuth or \"dev\" flow's)"),
        // The dev account's `tokenType` is checked as an OAuth account's.
        ProblemCase(
            F.account(
                #"{"flow": "dev", "tokenType": "jwt"}"#,
                routes: [#"{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["s"]}"#]),
            "account.tokenType", "must be one of \"bearer\", \"dpop\", \"auto\""),
        ProblemCase(
            F.route(#""prefix": "/api", \#(upstream), "auth": "none", "tokenType": "auto""#), "routes[0].tokenType",
            "not used with \"auth\": \"none\" (no token is sent)"),
        ProblemCase(
            F.account(
                dpopAccount(nil),
                routes: [
                    #"{"prefix": "/mcp", "upstream": "https://mcp.example.com", "auth": "discover", "#
                        + #""discovery": {"authorizationServer": "account"}, "tokenType": "dpop"}"#
                ]),
            "routes[0].tokenType",
            "\"dpop\" on a route whose authorization server is the account's needs DPoP-bound tokens, and the "
                + "account asks for bearer tokens: set the account's \"tokenType\" to \"dpop\" or \"auto\""),
    ]

    /// A discovered route with a sign-in of its own proves its own key (RFC 9449): `dpop` whatever the account asks.
    @Test(arguments: [nil, "bearer", "dpop"])
    func aDiscoveredRouteTakesDPoP(_ accountTokenType: String?) throws {
        let route =
            #"{"prefix": "/mcp", "upstream": "https://mcp.example.com", "auth": "discover", "tokenType": "dpop"}"#
        let configuration = try F.parse(F.account(Self.dpopAccount(accountTokenType), routes: [route]))
        #expect(configuration.routes.routes[0].tokenType == .dpop)
    }

    @Test(arguments: tokenTypeCases)
    func reportsTokenTypeProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }

    @Test(arguments: [(nil, TokenTypePreference.auto), ("bearer", .bearer), ("dpop", .dpop), ("auto", .auto)])
    func aRoutesTokenTypeIsRead(_ text: String?, _ expected: TokenTypePreference) throws {
        let member = text.map { #", "tokenType": "\#($0)""# } ?? ""
        let route = #"{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["s"]\#(member)}"#
        for account in ["auto", "dpop"] {
            let configuration = try F.parse(F.account(Self.dpopAccount(account), routes: [route]))
            #expect(configuration.routes.routes[0].tokenType == expected)
        }
    }

    @Test(arguments: prefixCases + upstreamCases)
    func reportsPrefixAndUpstreamProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }

    @Test(arguments: scopeCases + authCases)
    func reportsScopeAndAuthProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }

    @Test(arguments: headerCases + otherCases)
    func reportsHeaderAndOtherProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }
}
