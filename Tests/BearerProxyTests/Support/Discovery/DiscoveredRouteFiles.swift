import Foundation

@testable import BearerConfiguration
@testable import BearerTokens

/// What the `bearer-proxy` processes of a discovered-route test share, in a temporary directory removed afterwards:
/// a routes.json with the one discovered route `/mcp` to a ``FakeAuthorizationServer``'s resource, and a state
/// directory (`XDG_STATE_HOME`) — one machine's, for as many processes as the test starts.
struct DiscoveredRouteFiles {
    let directory: String

    var config: String { directory + "/routes.json" }

    /// The commands' environment: ours, with the state directory and `BROWSER` (the browser the sign-in opens).
    func environment(browser: String) -> [String: String] {
        InteractiveCommandLineTests.environment(state: directory + "/state", ["BROWSER": browser])
    }

    /// `BROWSER` that "opens" a tab and does nothing more: the test plays the person, when it chooses.
    static let idleBrowser = "true"
    /// `BROWSER` that visits the URL and follows the redirects to the loopback listener: the person approves.
    static let approvingBrowser = "curl --silent --location --output /dev/null"

    var stateDirectory: StateDirectory { StateDirectory.standard(environment: environment(browser: Self.idleBrowser)) }
    var store: DiscoveredSignInStore { DiscoveredSignInStore(directory: stateDirectory) }

    /// `bearer-proxy ARGUMENTS --config FILE` to completion, `BROWSER` being `browser`.
    func run(_ arguments: [String], browser: String = approvingBrowser) async throws -> Python.Result {
        try await CommandLineTests.run(arguments + ["--config", config], environment: environment(browser: browser))
    }

    static func with(_ server: FakeAuthorizationServer, _ body: (DiscoveredRouteFiles) async throws -> Void)
        async throws
    {
        let files = DiscoveredRouteFiles(directory: try CommandLineTests.temporaryDirectory())
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let routes = server.routes(prefix: "/mcp")
        try #"{"account": {"flow": "dev"}, "routes": \#(routes)}"#.write(
            toFile: files.config, atomically: true, encoding: .utf8)
        try await body(files)
    }
}
