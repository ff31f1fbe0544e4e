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

/// Numbers from the network are read without trusting them (issue #22 item 7): `Retry-After` in both of its forms,
/// clamped to a documented range; `expires_in`, `refresh_in` and a device code's `interval` finite and clamped. A
/// provider's `Retry-After: 9223372036854775807` used to crash the proxy (an integer conversion trapped), and
/// `-5` was passed on to clients.
@Suite("Identity provider numbers: Retry-After, expires_in, interval")
struct ProviderNumberTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test(
        "Retry-After: delta-seconds and HTTP-dates, clamped to 1 s…1 h; anything else is not a Retry-After",
        arguments: [
            ("120", 120), (" 30\t", 30), ("0", 1), ("3600", 3600), ("3601", 3600), ("999999999", 3600),
            ("9223372036854775807", 3600), ("99999999999999999999999999999", 3600),
            ("Wed, 21 Oct 2099 07:28:00 GMT", 3600), ("Sun, 06 Nov 1994 08:49:37 GMT", 1),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 1), ("Sun Nov  6 08:49:37 1994", 1),
        ])
    func retryAfterValues(value: String, seconds: Int) {
        #expect(RetryAfter.seconds(value, now: Self.now) == seconds, "\(value)")
    }

    @Test(
        "Retry-After values that are neither form are ignored (the caller's own back-off applies)",
        arguments: [
            "-5", "+5", "1e9", "5.5", "0x10", "soon", "", "Sun, 06 Nov 1994 08:49:37 GMT trailing",
            "Sun, 06 Nov 1994 08:49:37 PST", "Funday, 99 Nov 1994 08:49:37 GMT", "١٢٣",
        ])
    func retryAfterRefused(value: String) {
        #expect(RetryAfter.seconds(value, now: Self.now) == nil, "\(value)")
    }

    @Test("an HTTP-date is measured from now")
    func retryAfterDate() throws {
        let date = try #require(RetryAfter.httpDate("Mon, 01 Jan 2029 00:01:30 GMT"))
        let now = date.addingTimeInterval(-90)
        #expect(RetryAfter.seconds("Mon, 01 Jan 2029 00:01:30 GMT", now: now) == 90)
    }

    @Test(
        "expires_in and friends: finite, 0…10 years, or absent",
        arguments: [
            ("3600", 3600.0), ("-5", 0.0), ("inf", nil), ("nan", nil), ("1e999", nil), ("soon", nil),
            ("315360001", TokenResponse.maximumSeconds),
        ] as [(String, TimeInterval?)])
    func secondsFromText(text: String, expected: TimeInterval?) {
        #expect(TokenResponse.seconds(text) == expected, "\(text)")
    }

    @Test("expires_in as a JSON number: huge, negative or fractional values cannot trap later")
    func secondsFromJSON() throws {
        let body = Data(#"{"access_token": "t", "expires_in": 1e300, "refresh_in": -7}"#.utf8)
        let response = try #require(TokenResponse(json: body))
        #expect(response.expiresIn == TokenResponse.maximumSeconds)
        #expect(response.refreshIn == 0)
        let token = response.accessToken(for: TokenRequest(scopes: ScopeSet(["api://a/Read"])), at: Self.now)
        #expect(StatusReport.wholeSeconds(token.expiresOn.timeIntervalSince(Self.now)) > 0)
    }

    @Test(
        "a device code's interval and lifetime are clamped before any integer conversion",
        arguments: [
            (#""interval": 1e300, "expires_in": 1e300"#, 60, 86_400),
            (#""interval": -3, "expires_in": 0"#, 1, 60),
            (#""interval": "NaN", "expires_in": "900""#, 5, 900),
            ("", 5, 1800),
        ])
    func deviceCodeNumbers(members: String, interval: Int, expiresIn: Int) throws {
        let extra = members.isEmpty ? "" : ", " + members
        let body = #"{"device_code": "d", "user_code": "U", "verification_uri": "https://x"\#(extra)}"#
        let authorization = try #require(DeviceAuthorization(json: Data(body.utf8)))
        #expect(authorization.interval == interval)
        #expect(authorization.expiresIn == expiresIn)
    }

    @Test("a stored block counts down in whole seconds, 1 s to a day, whatever the clock or the provider did")
    func wholeSeconds() {
        #expect(TokenCache.wholeSeconds(.infinity) == 1)
        #expect(TokenCache.wholeSeconds(.nan) == 1)
        #expect(TokenCache.wholeSeconds(-1e300) == 1)
        #expect(TokenCache.wholeSeconds(1e300) == 86_400)
        #expect(TokenCache.wholeSeconds(2.2) == 3)
    }

    /// `Retry-After` values a hostile or broken provider sends with its 503.
    static let hostileRetryAfter = [
        "9223372036854775807", "18446744073709551616", "-5", "0", "Wed, 21 Oct 2099 07:28:00 GMT", "later",
    ]

    @Test(
        "a real serve answers a provider's hostile Retry-After with a sane one and keeps running",
        arguments: hostileRetryAfter)
    func serveSurvivesRetryAfter(value: String) async throws {
        try await withIdentityProvider { provider in
            provider.setPersistentFailure(
                .raw(
                    status: 503, headers: [("Retry-After", value), ("Content-Type", "application/json")],
                    body: #"{"error": "temporarily_unavailable"}"#))
            try await withUpstream({ _ in .echo }) { upstream in
                let directory = try CommandLineTests.temporaryDirectory()
                defer { try? FileManager.default.removeItem(atPath: directory) }
                let config = directory + "/routes.json"
                try Data(
                    """
                    { "account": \(TestAccounts.clientSecret(provider)),
                      "routes": [ \(route(to: upstream, scopes: ["api://todo/.default"])) ] }
                    """.utf8
                ).write(to: URL(fileURLWithPath: config))
                var environment = ProcessInfo.processInfo.environment
                environment["XDG_STATE_HOME"] = directory
                for (key, value) in TestAccounts.environment(provider) { environment[key] = value }
                let (_, output) = try await ChildProcess.withListening(
                    ["serve", "--config", config, "--listen", "127.0.0.1:0"], environment: environment
                ) { port, running in
                    #expect(try await CommandLineTests.waitUntilHealthy(port: port))
                    for _ in 0..<2 {
                        let response = try await TestClient.send(port: port, uri: "/api/x")
                        #expect(response.status == .serviceUnavailable, "\(value)")
                        let retryAfter = response.header("retry-after").flatMap { Int($0) }
                        #expect(
                            retryAfter.map { RetryAfter.range.contains($0) } == true, "\(value): \(retryAfter as Any)")
                    }
                    // Still alive and answering.
                    #expect(try await TestClient.send(port: port, uri: "/-/health").status == .ok, "\(value)")
                    #expect(upstream.requests.isEmpty)
                    running.signal(SIGTERM)
                }
                #expect(output.status == 0, "\(value): \(output.stderr.suffix(600))")
            }
        }
    }
}

/// Token lifetimes a provider hands out, end to end (issue #22 item 6): no expired token reaches an upstream, and
/// no lifetime makes every request cost a token request.
@Suite("Token lifetimes from the provider: no expired token upstream, no token storm")
struct TokenLifetimeEndToEndTests {
    @Test(
        "ten requests with the provider's expires_in: how many token requests, and what the upstream gets",
        arguments: [
            // Keycloak's default: each request used to fetch a token (inside the fixed 5-minute margin).
            (300, 1, 10),
            // Expired on arrival: never forwarded, and the back-off spares the provider.
            (0, 1, 0), (-60, 1, 0),
            (3600, 1, 10),
        ])
    func lifetimes(expiresIn: Int, tokenRequests: Int, forwarded: Int) async throws {
        var configuration = FakeIdentityProvider.Configuration()
        configuration.expiresIn = expiresIn
        try await withIdentityProvider(configuration) { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/.default"]) + "]",
                    account: TestAccounts.clientSecret(provider), environment: TestAccounts.environment(provider)
                ) { proxy in
                    for _ in 0..<10 {
                        let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                        #expect(
                            response.status == (forwarded > 0 ? .ok : .serviceUnavailable), "expires_in \(expiresIn)")
                    }
                    if forwarded > 0 {
                        #expect(provider.tokenRequestCount == tokenRequests, "expires_in \(expiresIn)")
                    } else {
                        // Each failure backs off 2 s, 4 s, 8 s, …: a machine slow enough to stretch the ten requests
                        // may see the back-off end, but never a request per request (before: ten).
                        #expect(provider.tokenRequestCount <= 4, "expires_in \(expiresIn)")
                    }
                    #expect(upstream.requests.count == forwarded, "expires_in \(expiresIn)")
                }
            }
        }
    }
}
