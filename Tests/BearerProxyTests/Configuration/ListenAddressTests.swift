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

@Suite struct ListenAddressTests {
    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080, true),
        ("localhost:0", "localhost", 0, true),
        ("LocalHost:1", "localhost", 1, true),
        ("[::1]:8080", "::1", 8080, true),
        ("0.0.0.0:80", "0.0.0.0", 80, false),
        ("[::]:443", "::", 443, false),
        ("127.255.0.9:65535", "127.255.0.9", 65535, true),
        ("proxy.internal:8080", "proxy.internal", 8080, false),
    ])
    func parses(text: String, host: String, port: Int, isLoopback: Bool) throws {
        let address = try #require(ListenAddress(parsing: text))
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.isLoopback == isLoopback)
    }

    @Test(arguments: [
        "", "8080", "localhost", "localhost:", ":8080", "::1:8080", "[::1]", "[::1]8080", "127.0.0.1:65536",
        "127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1: 80", "http://127.0.0.1:8080", "[localhost]:80", "bad_host!:80",
        "256.0.0.1:80", "127.1:80",
    ])
    func rejects(text: String) {
        #expect(ListenAddress(parsing: text) == nil)
    }

    @Test func descriptionBracketsIPv6() {
        #expect(ListenAddress(host: "::1", port: 8080).description == "[::1]:8080")
        #expect(ListenAddress(host: "127.0.0.1", port: 8080).description == "127.0.0.1:8080")
        #expect(ListenAddress.default.description == "127.0.0.1:8080")
    }
}
