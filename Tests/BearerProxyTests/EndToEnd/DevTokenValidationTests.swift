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

@Suite("Dev tokens validate with an independent JWT library")
struct DevTokenValidationTests {
    /// Runs Tests/python/validate_dev_token.py (PyJWT): it fetches the discovery document from the running proxy,
    /// follows `jwks_uri`, and verifies signature, issuer, audience and expiry.
    @Test("PyJWT accepts a dev token using only the proxy's discovery document")
    func pyJWTValidates() async throws {
        let routes = #"[ { "prefix": "/api", "upstream": "http://127.0.0.1:9", "scopes": ["api://todo/Read"] } ]"#
        try await ProxyHarness.with(routes: routes) { proxy in
            let token = try await proxy.proxy.tokens.accessTokenWithinLimit(for: ScopeSet(["api://todo/Read"]))
            let discovery = "http://127.0.0.1:\(proxy.port)/-/.well-known/openid-configuration"
            let accepted = try await Python.validate(token: token.value, discovery: discovery, audience: "api://todo")
            #expect(accepted.status == 0, "PyJWT refused the token: \(accepted.stderr)")
            let claims = try JSONSerialization.jsonObject(with: Data(accepted.stdout.utf8)) as? [String: Any]
            #expect(claims?["aud"] as? String == "api://todo")
            #expect(claims?["iss"] as? String == "http://127.0.0.1:\(proxy.port)/-")

            // The same library rejects the token for another audience and a token with a forged signature.
            let wrongAudience = try await Python.validate(
                token: token.value, discovery: discovery, audience: "api://other")
            #expect(wrongAudience.status != 0)
            var forged = token.value.split(separator: ".").map(String.init)
            forged[2] = String(forged[2].reversed())
            let forgedResult = try await Python.validate(
                token: forged.joined(separator: "."), discovery: discovery, audience: "api://todo")
            #expect(forgedResult.status != 0)
        }
    }
}

/// Runs the Python validator as a child process; the token goes through stdin, never argv.
enum Python {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `Tests/python/NAME` with `arguments` and `stdin`, as the test tools' `python3` (CI's virtual
    /// environment).
    static func run(_ name: String, _ arguments: [String] = [], stdin: String = "") async throws -> Result {
        let script = CommandLineTests.repositoryRoot + "/Tests/python/" + name
        return try await ChildProcess.run("/usr/bin/env", ["python3", script] + arguments, stdin: stdin)
    }

    static func validate(token: String, discovery: String, audience: String) async throws -> Result {
        try await run("validate_dev_token.py", [discovery, audience], stdin: token)
    }
}
