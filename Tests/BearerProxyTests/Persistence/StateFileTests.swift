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

/// The discovered routes' files follow the token cache's rules (#25 item 6): 0600, atomic, a file that does not
/// decode set aside rather than trusted or deleted.
@Suite struct StateFileTests {
    @Test func aCorruptFileIsSetAsideAndTheNextWriteStartsAfresh() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try scratch.state.prepare()
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: scratch.state.path + "/discovered-routes.json"))
        let store = DiscoveredSignInStore(directory: scratch.state)
        #expect(try store.routeKey(upstream: "https://a/mcp") == nil)
        #expect(scratch.entries().contains { $0.hasPrefix("discovered-routes.json.corrupt-") })
        let key = DiscoveredSignInKey(issuer: "https://as", clientID: "c", resource: "https://a/mcp")
        try store.setRouteKey(key, upstream: "https://a/mcp")
        #expect(try store.routeKey(upstream: "https://a/mcp") == key)
        #expect(try StoreScratchDirectory.mode(scratch.state.path + "/discovered-routes.json") == 0o600)
    }

    @Test func aRegistrationIsFoundOnlyForItsOwnIssuer() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = DiscoveredSignInStore(directory: scratch.state)
        try store.saveRegistration(
            PersistedRegistration(
                issuer: "https://one", registrationEndpoint: "https://one/register", clientID: "c1", clientSecret: "s"))
        #expect(try store.registration(issuer: "https://one")?.clientID == "c1")
        #expect(try store.registration(issuer: "https://two") == nil)
        #expect(try store.registration(issuer: "https://one/") == nil)
    }

    @Test func aSignInIsFoundOnlyUnderItsWholeKey() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = DiscoveredSignInStore(directory: scratch.state)
        let key = DiscoveredSignInKey(issuer: "https://as", clientID: "c", resource: "https://a/mcp")
        try store.updateSignIn(key) {
            $0 = PersistedDiscoveredSignIn(
                key: key, clientKind: "dynamic", tokenEndpoint: "https://as/token", scopes: [], refreshToken: "r")
        }
        #expect(try store.signIn(key)?.refreshToken == "r")
        var other = key
        other.resource = "https://b/mcp"
        #expect(try store.signIn(other) == nil)
        other = key
        other.clientID = "d"
        #expect(try store.signIn(other) == nil)
    }
}

/// The discovered records never show a token or a client secret (house rule 6).
@Suite struct DiscoveredRecordRedactionTests {
    @Test func noRenderingShowsASecret() {
        let key = DiscoveredSignInKey(issuer: "https://as", clientID: "c", resource: "https://a/mcp")
        let signIn = PersistedDiscoveredSignIn(
            key: key, clientKind: "dynamic", tokenEndpoint: "https://as/token", scopes: ["x"],
            refreshToken: "refresh-secret", accessToken: "access-secret", expiresOn: Date())
        let registration = PersistedRegistration(
            issuer: "https://as", registrationEndpoint: "https://as/r", clientID: "c", clientSecret: "client-secret")
        var dumped = ""
        dump(signIn, to: &dumped)
        dump(registration, to: &dumped)
        dump(DiscoveredClient(id: "c", secret: "client-secret", kind: .dynamic), to: &dumped)
        let texts = [
            "\(signIn)", String(reflecting: signIn), "\(registration)", String(reflecting: registration), dumped,
            "\(DiscoveredClient(id: "c", secret: "client-secret", kind: .dynamic))",
        ]
        for text in texts {
            for secret in ["refresh-secret", "access-secret", "client-secret"] {
                #expect(!text.contains(secret), "\(text)")
            }
            #expect(text.contains("<redacted>"))
        }
    }
}
