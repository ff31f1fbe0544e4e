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

/// #26 item 2 as users run it: `serve` with `"listen": "unix:"` makes `$XDG_RUNTIME_DIR/bearer-proxy/proxy.sock`,
/// `curl --unix-socket` gets a token-bearing answer through it, and SIGTERM removes the file.
@Suite("serve on a Unix-domain socket")
struct UnixSocketServeTests {
    @Test("serve listens on unix: under $XDG_RUNTIME_DIR; curl --unix-socket gets the token; SIGTERM removes it")
    func serveOnTheDefaultSocket() async throws {
        let base = "/tmp/bp-serve-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(
            atPath: base + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = base + "/run/bearer-proxy/proxy.sock"
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = """
                { "listen": "unix:", "account": { "flow": "dev" },
                  "routes": [ { "prefix": "/api", "upstream": "\(upstream.baseURL)", "scopes": ["api://a/R"] } ] }
                """
            try Data(routes.utf8).write(to: URL(fileURLWithPath: base + "/routes.json"))
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_RUNTIME_DIR"] = base + "/run"
            environment["XDG_STATE_HOME"] = base + "/state"
            environment.removeValue(forKey: "BEARER_PROXY_CONFIG")
            let (curl, output) = try await ChildProcess.withRunning(
                CommandLineTests.binary, ["serve", "--config", base + "/routes.json"], environment: environment
            ) { running in
                var healthy = false
                for _ in 0..<200 where !healthy {
                    if let connection = try? await TestConnection.open(unixSocket: socket, timeout: .seconds(1)) {
                        healthy = (try? await connection.send(method: "GET", uri: "/-/health"))?.status == .ok
                        await connection.close()
                    }
                    if !healthy { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(healthy, "serve never answered on \(socket)")
                let curl = try await ChildProcess.run(
                    "/usr/bin/curl",
                    [
                        "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", socket,
                        "http://localhost/api/x",
                    ])
                running.signal(SIGTERM)
                return curl
            }
            #expect(curl.stdout == "200", "curl: \(curl.stdout) \(curl.stderr)")
            let claims = try jwtClaims(upstream.requests.last?.head.headers["authorization"].first)
            #expect(claims["aud"] as? String == "api://a")
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stderr.contains("listening on unix:\(socket)"))
        }
        var status = stat()
        #expect(lstat(socket, &status) != 0, "the socket file outlived serve")
    }
}
