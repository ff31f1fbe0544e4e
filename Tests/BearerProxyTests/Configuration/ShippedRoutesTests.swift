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

/// The routes.json at the repository root is the embedded default; this keeps it valid and as documented.
@Suite struct ShippedRoutesTests {
    /// The repository root: up from this file (Tests/BearerProxyTests/Configuration/…), symlinks resolved.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func shippedRoutesLoadWithBothRoutes() throws {
        let path = Self.repositoryRoot.appendingPathComponent("routes.json").path
        let configuration = try Configuration.load(path: path, environment: [:])
        #expect(configuration.listeners == [.tcp(ListenAddress(host: "127.0.0.1", port: 8080))])
        #expect(configuration.account.flow == .dev)

        let routes = configuration.routes.routes
        #expect(routes.map(\.prefix) == ["/api1", "/api2"])
        #expect(
            routes.map(\.upstream.url) == ["http://127.0.0.1:8080/-/echo/api1", "http://127.0.0.1:8080/-/echo/api2"])
        #expect(routes.allSatisfy { $0.upstream.isLoopback })
        #expect(routes[0].auth == .bearer(ScopeSet(["api://api1/Data.Read"])))
        #expect(routes[1].auth == .bearer(ScopeSet(["api://api2/Data.Write", "api://api2/Data.Read"])))
        #expect(routes[0].auth.scopes?.resource == "api://api1")
        #expect(routes[1].auth.scopes?.resource == "api://api2")

        let match = try #require(configuration.routes.match(path: "/api2/items/7"))
        #expect(routes[match.position].prefix == "/api2")
        #expect(match.remainder == "/items/7")
    }
}
