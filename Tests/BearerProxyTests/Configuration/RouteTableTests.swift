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

@Suite struct RouteTableTests {
    static func route(_ prefix: String) -> Route {
        Route(prefix: prefix, upstream: Upstream(parsing: "https://api.example.com")!, auth: .none)
    }

    static let table = RouteTable([route("/graph"), route("/graph/beta"), route("/todo"), route("/a:b")])

    @Test(arguments: [
        ("/graph", "/graph", ""),
        ("/graph/", "/graph", "/"),
        ("/graph/me", "/graph", "/me"),
        ("/graph/me/messages", "/graph", "/me/messages"),
        ("/graph/beta", "/graph/beta", ""),
        ("/graph/beta/me", "/graph/beta", "/me"),
        ("/graph/betamax", "/graph", "/betamax"),
        ("/graph/%2Fx", "/graph", "/%2Fx"),
        ("/todo/lists", "/todo", "/lists"),
        ("/a:b/c", "/a:b", "/c"),
    ])
    func matchesOnSegmentBoundaries(path: String, prefix: String, remainder: String) throws {
        let match = try #require(Self.table.match(path: Substring(path)))
        #expect(Self.table.routes[match.position].prefix == prefix)
        #expect(match.remainder == remainder)
    }

    @Test(arguments: ["/graphql", "/graphs/me", "/", "/tod", "", "graph", "/Graph", "/-/health"])
    func doesNotMatch(path: String) {
        #expect(Self.table.match(path: Substring(path)) == nil)
    }

    @Test func rootPrefixMatchesEverythingElse() throws {
        let table = RouteTable([Self.route("/"), Self.route("/graph")])
        let root = try #require(table.match(path: "/graphql?x"))
        #expect(table.routes[root.position].prefix == "/")
        #expect(root.remainder == "/graphql?x")
        #expect(try #require(table.match(path: "/")).remainder == "/")
        #expect(table.routes[try #require(table.match(path: "/graph/me")).position].prefix == "/graph")
        #expect(table.match(path: "*") == nil)
    }

    @Test func keepsConfigOrderAndMatchesWithinALargerString() throws {
        #expect(Self.table.routes.map(\.prefix) == ["/graph", "/graph/beta", "/todo", "/a:b"])
        let line = "GET /graph/beta/me?x=1 HTTP/1.1"
        let path = line.split(separator: " ")[1].split(separator: "?")[0]
        let match = try #require(Self.table.match(path: path))
        #expect(Self.table.routes[match.position].prefix == "/graph/beta")
        #expect(match.remainder == "/me")
    }

    @Test func worksOnNonASCIIPaths() throws {
        let match = try #require(Self.table.match(path: "/todo/caf\u{E9}"))
        #expect(match.remainder == "/caf\u{E9}")
    }
}
