import Testing

@testable import BearerConfiguration
@testable import BearerSignIn

/// A hostile 401 naming this machine by a literal address (#25 item 1, the SSRF rule), on real sockets: a remote
/// upstream (`mcp.rebind.test`, which the test's policy counts as global) whose challenge's `resource_metadata`, or
/// whose protected-resource metadata's `authorization_servers`, names a live internal service on 127.0.0.1 and
/// [::1] in each spelling an attacker would try. (Private and link-local ranges, and IPv6 forms that no listener
/// here can answer, are judged in memory by `DiscoveryRuleTests`: were the rule broken, a real-socket test of them
/// would connect off this machine.) Discovery refuses with the error that says what to set, and the
/// internal service receives nothing; with `allowPrivateAddresses` on the route the same URL reaches it — so what
/// refused it is the rule, not a fetch that could not have worked.
@Suite struct HostileLiteralAddressTests {
    typealias World = RebindingWorld
    typealias Page = FakeDiscoveryPage

    /// The internal service's listeners, both on one port.
    enum Listener: Sendable {
        case ipv4
        case ipv6
    }

    /// One way to write an origin on this machine; `{port}` becomes the internal service's port.
    struct Spelling: Sendable, CustomTestStringConvertible {
        var origin: String
        /// The address the refusal names, and its reach; nil when no address is judged because the URL is refused
        /// as such (`URLParts` takes no IPv4 spelling but the dotted quad, so a resolver never reads one as a
        /// number).
        var refusal: (address: String, reach: String)?
        /// The listener the URL reaches when the route allows internal addresses; nil for a name (the test's
        /// resolver would send it to 127.0.0.2, where no internal service listens), so it is not fetched then.
        var reaches: Listener?

        var testDescription: String { origin }

        /// Whether a discovery allowing internal addresses is run with it too: one that reaches the internal service,
        /// or one the URL parser refuses whatever the route allows.
        var triedWhenAllowed: Bool { reaches != nil || refusal == nil }

        func origin(port: Int) -> String { origin.replacingOccurrences(of: "{port}", with: "\(port)") }
    }

    static let spellings: [Spelling] = [
        Spelling(origin: "http://127.0.0.1:{port}", refusal: ("127.0.0.1", "loopback"), reaches: .ipv4),
        Spelling(origin: "http://[::1]:{port}", refusal: ("0:0:0:0:0:0:0:1", "loopback"), reaches: .ipv6),
        // Linux connects 0.0.0.0 to this machine. (https: plain http is for loopback host names, which 0.0.0.0 is
        // not — refused as not https before its address is judged.)
        Spelling(origin: "https://0.0.0.0:{port}", refusal: ("0.0.0.0", "loopback"), reaches: .ipv4),
        // IPv4-mapped IPv6: an IPv6 socket reaches the IPv4 listener.
        Spelling(
            origin: "http://[::ffff:127.0.0.1]:{port}", refusal: ("0:0:0:0:0:ffff:7f00:1", "loopback"), reaches: .ipv4),
        Spelling(
            origin: "http://[::FFFF:7f00:1]:{port}", refusal: ("0:0:0:0:0:ffff:7f00:1", "loopback"), reaches: .ipv4),
        // Names of this machine whatever a resolver says (RFC 6761 §6.3); the test's resolver would say 127.0.0.2.
        Spelling(origin: "http://localhost:{port}", refusal: ("localhost", "loopback")),
        Spelling(origin: "https://metadata.localhost:{port}", refusal: ("metadata.localhost", "loopback")),
        // What WHATWG URL parsers and inet_aton read as 127.0.0.1: refused before any address is looked at.
        Spelling(origin: "http://127.1:{port}"),
        Spelling(origin: "http://2130706433:{port}"),
        Spelling(origin: "http://0x7f.0.0.1:{port}"),
        Spelling(origin: "http://0177.0.0.1:{port}"),
        Spelling(origin: "http://127.0.0.0x1:{port}"),
        Spelling(origin: "http://127.0.0.1.:{port}"),
    ]

    /// The challenge's `resource_metadata` names the internal service: the metadata URL is refused before it is
    /// fetched.
    @Test(
        "a 401 whose resource_metadata names this machine: refused, the internal service gets nothing",
        arguments: spellings)
    func challengeNamesAnInternalAddress(_ spelling: Spelling) async throws {
        try await Self.withInternalService { service in
            let url = spelling.origin(port: service.port) + "/.well-known/oauth-protected-resource/mcp"
            let role = "protected-resource metadata URL"
            let pages = ["/mcp": FakeDiscoveryServer.challenge(#"Bearer resource_metadata="\#(url)""#)]
            try await Self.attack(
                spelling, url: url, role: role, pages: pages, service: service,
                fetched: "/.well-known/oauth-protected-resource/mcp")
        }
    }

    /// The metadata, on the upstream's own origin, names the internal service as its authorization server: refused
    /// before its metadata is fetched.
    @Test(
        "protected-resource metadata whose authorization server is this machine: refused, the internal service gets nothing",
        arguments: spellings)
    func metadataNamesAnInternalAuthorizationServer(_ spelling: Spelling) async throws {
        try await Self.withInternalService { service in
            let issuer = spelling.origin(port: service.port)
            let pages = [
                "/mcp": FakeDiscoveryServer.challenge(
                    #"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp""#),
                "/.well-known/oauth-protected-resource/mcp": Page(
                    body: #"{"resource": "{origin}/mcp", "authorization_servers": ["\#(issuer)"]}"#),
            ]
            try await Self.attack(
                spelling, url: issuer, role: "authorization server", pages: pages, service: service,
                fetched: "/.well-known/oauth-authorization-server")
        }
    }

    /// Discovery of the world's route serving `pages`: refused with the rule's error when the route does not allow
    /// internal addresses — nothing reaching the internal service — and, when it does, the internal service is
    /// reached and asked for `fetched` (over http; an https URL reaches the plain listener and fails its handshake).
    static func attack(
        _ spelling: Spelling, url: String, role: String, pages: [String: Page], service: InternalService,
        fetched: String
    ) async throws {
        try await World.with(pages: pages) { world in
            let resolver = RebindingResolver(always: [World.global])
            let refusal =
                spelling.refusal.map {
                    DiscoveryError.privateAddress(role: role, url: url, address: $0.address, reach: $0.reach)
                } ?? DiscoveryError.invalidURL(role: role, url: url)
            await #expect(throws: refusal) { try await DNSRebindingTests.discover(world, resolver) }
            if spelling.refusal != nil {
                #expect(refusal.explanation.contains(#""allowPrivateAddresses": true"#))
            }
            #expect(service.ipv4.acceptedConnections == 0 && service.ipv6.acceptedConnections == 0)
            #expect(world.victim.acceptedConnections == 0)
            guard spelling.triedWhenAllowed else { return }

            let allowing = DiscoverySettings(allowPrivateAddresses: true)
            let allowed = await #expect(throws: DiscoveryError.self) {
                try await DNSRebindingTests.discover(world, resolver, settings: allowing)
            }
            guard let listener = spelling.reaches else {
                #expect(allowed == refusal, "the URL parser refuses \(url) whatever the route allows")
                return
            }
            // The internal service has no metadata (404): what matters is that the URL reached it.
            let reached = listener == .ipv4 ? service.ipv4 : service.ipv6
            #expect(reached.acceptedConnections > 0, "allowed, \(url) did not reach the internal service")
            if url.hasPrefix("http:") { #expect(reached.requests.first?.head.uri == fetched) }
            #expect(world.victim.acceptedConnections == 0)
        }
    }

    /// An internal service on this machine, 127.0.0.1 and [::1] on one port, answering 404 to anything and
    /// recording every connection.
    struct InternalService: Sendable {
        let ipv4: FakeUpstream
        let ipv6: FakeUpstream

        var port: Int { ipv4.port }
    }

    static func withInternalService(_ body: (InternalService) async throws -> Void) async throws {
        let answer: @Sendable (RequestHead) -> UpstreamBehaviour = { _ in .respond(status: 404, text: "internal") }
        // The IPv6 listener takes the port the IPv4 one was given, which something else on ::1 may hold already
        // (a flake seen in CI: EADDRINUSE): then both are tried again on a new port.
        var attempt = 0
        var listeners: (ipv4: FakeUpstream, ipv6: FakeUpstream)?
        while listeners == nil {
            attempt += 1
            let ipv4 = try await FakeUpstream.start(behaviour: answer)
            do {
                listeners = (ipv4, try await FakeUpstream.start(host: "::1", port: ipv4.port, behaviour: answer))
            } catch {
                try? await ipv4.shutdown()
                if attempt == 10 { throw error }
            }
        }
        guard let (ipv4, ipv6) = listeners else { return }
        do {
            try await body(InternalService(ipv4: ipv4, ipv6: ipv6))
        } catch {
            try? await ipv4.shutdown()
            try? await ipv6.shutdown()
            throw error
        }
        try await ipv4.shutdown()
        try await ipv6.shutdown()
    }
}
