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

/// A Client ID Metadata Document as a discovered route's client identity (#25 item 3; the MCP specification's CIMD,
/// draft-ietf-oauth-client-id-metadata-document): when the authorization server's metadata says
/// `client_id_metadata_document_supported: true` and the route names a document, its https URL is the `client_id` —
/// after a configured client, before dynamic registration, else a clear error.
@Suite struct ClientMetadataDocumentTests {
    static let document = "https://app.example.com/bearer-proxy.json"

    static func server(supportsDocuments: Bool, offersRegistration: Bool = true) -> FakeAuthorizationServer.Settings {
        var settings = FakeAuthorizationServer.Settings()
        settings.metadataDocuments = supportsDocuments ? [document] : []
        settings.offersRegistration = offersRegistration
        return settings
    }

    @Test("a server that takes documents: the URL is the client_id, nothing registers, and serve refreshes with it")
    func documentIsTheClientID() async throws {
        try await DiscoveredSignInTests.withServer(Self.server(supportsDocuments: true)) { server, scratch in
            let settings = DiscoverySettings(clientMetadataDocument: Self.document)
            let outcome = try await DiscoveredSignInTests.signIn(server, state: scratch.state, settings: settings).get()
            #expect(outcome.clientKind == "metadata-document" && outcome.clientID == Self.document)
            #expect(server.registrations == 0)
            #expect(server.authorizeQueries.first?["client_id"] == Self.document)
            #expect(server.tokenForms.first?["client_id"] == Self.document)
            #expect(server.tokenAuthentications == ["none"])
            let routes = server.routes(discovery: #""clientMetadataDocument": "\#(Self.document)""#)
            try await ProxyHarness.with(routes: routes, stateDirectory: scratch.state) { proxy in
                server.revokeAccessTokens()
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
                let refresh = try #require(server.tokenForms.last)
                #expect(refresh["grant_type"] == "refresh_token" && refresh["client_id"] == Self.document)
                let status = try await TestClient.send(port: proxy.port, uri: "/-/status")
                let entries = try #require(try status.jsonObject()["routes"] as? [[String: Any]])
                let discovered = try #require(entries.first?["discovered"] as? [String: Any])
                #expect(discovered["clientKind"] as? String == "metadata-document")
                #expect(discovered["clientId"] as? String == Self.document)
            }
        }
    }

    @Test("a server that does not say it takes documents: dynamic registration, as before")
    func unsupportedFallsBackToRegistration() async throws {
        try await DiscoveredSignInTests.withServer(Self.server(supportsDocuments: false)) { server, scratch in
            let settings = DiscoverySettings(clientMetadataDocument: Self.document)
            let outcome = try await DiscoveredSignInTests.signIn(server, state: scratch.state, settings: settings).get()
            #expect(outcome.clientKind == "dynamic" && outcome.clientID != Self.document)
            #expect(server.registrations == 1)
        }
    }

    @Test("neither documents nor registration: a clear error saying what to configure, and no authorization request")
    func neitherIsAClearError() async throws {
        let fake = Self.server(supportsDocuments: false, offersRegistration: false)
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            let settings = DiscoverySettings(clientMetadataDocument: Self.document)
            let outcome = try await DiscoveredSignInTests.signIn(server, state: scratch.state, settings: settings)
            let failure = try #require(DiscoveredSignInTests.failure(outcome))
            #expect(failure.message.contains("Client ID Metadata Document"), "\(failure.message)")
            #expect(failure.message.contains(#""discovery": {"clientId""#), "\(failure.message)")
            #expect(server.authorizeQueries.isEmpty)
        }
    }
}
