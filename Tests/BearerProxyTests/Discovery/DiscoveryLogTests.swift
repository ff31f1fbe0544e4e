import Testing

@testable import BearerConfiguration
@testable import BearerSignIn

/// "One log line per discovery step" (#25 item 8), on real sockets: each step of a discovery is one `info` line
/// naming the route and the URL or issuer it used, in order — and a whole sign-in's log, discovery included,
/// carries none of the secrets the authorization server handed out.
@Suite struct DiscoveryLogTests {
    /// The discovery lines of `lines` (a ``CapturingLogHandler`` store's): `level message metadata source`.
    static func discoveryLines(_ lines: [String]) -> [String] {
        lines.filter { $0.contains(" discovery: ") }
    }

    /// Whether `line` is the step `message` at `info`, for the route `/mcp`, carrying every one of `values`.
    static func line(_ line: String, is message: String, with values: [String] = []) -> Bool {
        line.hasPrefix("info discovery: \(message) ") && line.contains(#""route": /mcp"#)
            && values.allSatisfy { line.contains($0) }
    }

    @Test("a discovery and sign-in: one info line per step, in order, naming the URLs; no secret in any line")
    func oneLinePerStep() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.registrationSecrets = true
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            let log = CapturingLogHandler.Store()
            let outcome = try await DiscoveredSignInTests.signIn(
                server, state: scratch.state, logger: CapturingLogHandler.logger(into: log))
            _ = try outcome.get()
            let lines = Self.discoveryLines(log.all)
            let metadataURL = server.baseURL + "/.well-known/oauth-protected-resource/mcp"
            let serverURL = server.baseURL + "/.well-known/oauth-authorization-server"
            let steps: [(String, [String])] = [
                ("upstream answered", [server.resource, #""status": 401"#, metadataURL]),
                ("protected-resource metadata URL tried", [metadataURL, #""outcome": found"#]),
                ("protected-resource metadata used", [metadataURL, server.resource, server.baseURL]),
                ("authorization-server metadata URL tried", [serverURL, #""outcome": found"#]),
                ("authorization-server metadata used", [serverURL, server.baseURL, "S256"]),
                ("client registration chosen", [server.baseURL, #""registration": dynamic"#]),
            ]
            #expect(lines.count == steps.count, "\(lines)")
            for (line, (message, values)) in zip(lines, steps) {
                #expect(Self.line(line, is: message, with: values), "\(line)")
            }

            // Everything the server handed out, and the verifier the sign-in sent: in no line of the whole run.
            let forms = server.tokenForms
            let secrets =
                server.issuedTokens + forms.compactMap { $0["code"] } + forms.compactMap { $0["code_verifier"] }
                + forms.compactMap { $0["client_secret"] }
            #expect(secrets.contains { $0.hasPrefix("cs-") } && secrets.contains { $0.hasPrefix("rat-") })
            #expect(forms.contains { $0["code_verifier"] != nil })
            for secret in secrets {
                #expect(!log.all.contains { $0.contains(secret) }, "a log line carries \(secret)")
            }
        }
    }

    @Test("a discovery that stops: its steps so far, then one line with the reason")
    func stoppedDiscovery() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.metadataResource = "https://elsewhere.example/mcp"
        try await DiscoveredSignInTests.withServer(settings) { server, _ in
            let log = CapturingLogHandler.Store()
            await #expect(
                throws: DiscoveryError.resourceMismatch(
                    resource: "https://elsewhere.example/mcp", upstream: server.resource)
            ) {
                try await DiscoveredAuthorization.discover(
                    for: DiscoveredSignInTests.route(server), settings: DiscoverySettings(),
                    logger: CapturingLogHandler.logger(into: log))
            }
            let lines = Self.discoveryLines(log.all)
            #expect(lines.count == 3, "\(lines)")
            #expect(lines.first.map { Self.line($0, is: "upstream answered") } == true)
            #expect(lines.dropFirst().first.map { Self.line($0, is: "protected-resource metadata URL tried") } == true)
            #expect(
                lines.last.map {
                    Self.line($0, is: "stopped", with: ["https://elsewhere.example/mcp", "not this route's upstream"])
                } == true, "\(lines)")
        }
    }
}
