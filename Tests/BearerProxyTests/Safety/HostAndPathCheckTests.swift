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

/// The per-request checks that compare bytes instead of lowercased copies: same answers as the plain definitions.
@Suite("Host allowlist and the reserved /-/ prefix, compared on bytes")
struct HostAndPathCheckTests {
    @Test(
        "Host values: loopback names in any case and with a port are ours; look-alikes are not",
        arguments: [
            ("127.0.0.1", true), ("127.0.0.1:8080", true), ("LocalHost", true), ("localhost:1", true),
            ("[::1]:8080", true), ("proxy.internal", true), ("PROXY.internal:443", true),
            ("127.0.0.2", false), ("localhost.evil.example", false), ("localhos", false), ("127.0.0.1.nip.io", false),
            ("evil.example", false), ("", false),
        ])
    func hosts(_ host: String, _ allowed: Bool) {
        let check = RequestGuard(policy: SafetyPolicy(allowedHosts: ["Proxy.Internal"]))
        #expect(check.isAllowed(host: Substring(host)) == allowed)
    }

    @Test(
        "paths under /-/ (and /- itself) belong to the proxy; others, /-x included, go to routes",
        arguments: [
            ("/-", true), ("/-/", true), ("/-/health", true), ("/-/echo/a", true),
            ("/-x", false), ("/", false), ("/api/-/x", false), ("", false), ("-/", false), ("/--/", false),
        ])
    func reservedPrefix(_ path: String, _ owned: Bool) {
        #expect(AdminEndpoints.owns(Substring(path)) == owned)
    }
}
