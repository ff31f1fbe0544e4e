import NIOCore
import NIOPosix
import Testing

@testable import BearerSignIn

/// The sign-in's redirect listener listens on loopback only (RFC 8252 §7.3, §8.3): on any other interface, any
/// machine that reaches it could hand the sign-in an authorization code, or read one (#25 item 4).
@Suite("LoopbackRedirectListener: loopback only")
struct LoopbackRedirectListenerTests {
    @Test("every address it listens on is a loopback one, with and without IPv6")
    func loopbackOnly() async throws {
        for alsoIPv6 in [false, true] {
            let listener = try await LoopbackRedirectListener.start(
                port: 0, group: MultiThreadedEventLoopGroup.singleton, timeout: .seconds(60), alsoIPv6: alsoIPv6
            ) { _ in "" }
            let addresses = listener.listeningAddresses
            await listener.close()
            #expect(!addresses.isEmpty)
            for address in addresses {
                #expect(
                    address.ipAddress == "127.0.0.1" || address.ipAddress == "::1",
                    "listening on \(address.description)")
                #expect(address.port == listener.port)
            }
            #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/")
        }
    }
}
