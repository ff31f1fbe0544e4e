import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import BearerConfiguration
@testable import BearerSignIn

/// The clients one operation's pinned requests share (#25, ``PinnedConnections``), on real sockets with TLS
/// (``RebindingWorld``): a client per host and judged address, made once per operation, shut down at its end —
/// and a request still reaches only the address its URL was judged on, whatever client the operation already has.
@Suite struct PinnedConnectionsTests {
    typealias World = RebindingWorld

    /// A pinned client trusting the world's CA (``DNSRebindingTests/connectDeadline``).
    static var http: PinnedHTTPClient {
        PinnedHTTPClient(
            configuration: DiscoveryClient.configuration(
                caFile: World.caFile, connect: DNSRebindingTests.connectDeadline),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    }

    static func get(_ url: PinnedURL, over connections: PinnedConnections) async throws -> (Int, String) {
        try await connections.execute(
            HTTPClientRequest(url: url.text), to: url, timeout: .seconds(60), logger: ProxyHarness.silentLogger
        ) { response in
            (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 16)))
        }
    }

    @Test("a discovery across two hosts makes one client per host and address for its three requests, not one each")
    func oneClientPerHostAndAddress() async throws {
        try await World.with(pages: DNSRebindingTests.pages) { world in
            let resolver = RebindingResolver(always: [World.global])
            let made = try await DiscoveryClient.with(
                caFile: World.caFile, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: ProxyHarness.silentLogger, connect: DNSRebindingTests.connectDeadline
            ) { transport in
                let found = try await ResourceDiscovery(
                    route: world.upstream, settings: DiscoverySettings(), transport: transport,
                    addresses: world.policy(resolver), logger: ProxyHarness.silentLogger
                ).run()
                #expect(found.tokenEndpoint == world.url("token", "/token"))
                return transport.connections?.clientCount
            }
            // The probe and the protected-resource metadata on mcp.rebind.test, the server's metadata on
            // as.rebind.test: each a TLS context built once.
            #expect(made == 2)
            #expect(world.server.requests.count == 3 && world.victim.acceptedConnections == 0)
        }
    }

    @Test("a name judged again on another address gets that address's client, never the one kept for the first")
    func anotherAddressAnotherClient() async throws {
        try await World.with(pages: DNSRebindingTests.pages) { world in
            // The route allows internal addresses, so both answers pass the check; each must be the one reached.
            let resolver = RebindingResolver(first: [World.global], then: [World.internalAddress])
            let policy = world.policy(resolver, settings: DiscoverySettings(allowPrivateAddresses: true))
            let text = world.url("as", "/.well-known/oauth-authorization-server")
            try await Self.http.withConnections { connections in
                let first = try await policy.pin(text, role: "authorization-server metadata URL")
                #expect(try await Self.get(first, over: connections).1.contains("issuer"))
                let second = try await policy.pin(text, role: "authorization-server metadata URL")
                #expect(second.addresses == [World.internalAddress])
                #expect(try await Self.get(second, over: connections) == (200, "the internal service"))
                #expect(connections.clientCount == 2)
            }
            #expect(world.server.requests.count == 1 && world.victim.requests.count == 1)
            #expect(world.victim.requests.first?.head.header("host") == "as.rebind.test:\(world.port)")
        }
    }

    @Test("a request through an operation that has ended is refused, and no client is made for it")
    func nothingAfterTheOperation() async throws {
        try await World.with(pages: DNSRebindingTests.pages) { world in
            let url = try await world.policy(RebindingResolver(always: [World.global])).pin(
                world.url("as", "/.well-known/oauth-authorization-server"), role: "authorization-server metadata URL")
            let ended = await Self.http.withConnections { $0 }
            await #expect(throws: HTTPClientError.alreadyShutdown) {
                try await Self.get(url, over: ended)
            }
            #expect(ended.clientCount == 0)
            #expect(world.server.acceptedConnections == 0 && world.victim.acceptedConnections == 0)
        }
    }
}
