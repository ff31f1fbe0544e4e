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

/// The metadata a sign-in stores, reused by `login ROUTE` when a fresh discovery fails for now (#25 item 1), and
/// only then.
@Suite struct DiscoveredStoredMetadataTests {
    static func discoverOrStored(
        _ server: FakeAuthorizationServer, state: StateDirectory
    ) async throws(DiscoveryError) -> (found: DiscoveredAuthorization, unavailable: DiscoveryError?) {
        try await DiscoveredAuthorization.discoverOrStored(
            for: DiscoveredSignInTests.route(server), settings: DiscoverySettings(), stateDirectory: state,
            logger: ProxyHarness.silentLogger)
    }

    @Test("metadata answering 503: login signs in again with what the last sign-in stored")
    func transientFailureUsesStoredMetadata() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            server.update { $0.metadataStatus = 503 }
            let (found, unavailable) = try await Self.discoverOrStored(server, state: scratch.state)
            #expect(unavailable?.isTransient == true)
            #expect(found.issuer == server.baseURL && found.resource == server.resource)
            #expect(found.authorizationEndpoint == server.baseURL + "/authorize")
            #expect(found.tokenEndpoint == server.baseURL + "/token")
            #expect(found.registration == .dynamic(endpoint: server.baseURL + "/register"))
            #expect(found.issParameterSupported && found.scopeSource == .stored)
            let console = ScriptedConsole(browser: true)
            async let browsing: Void = DiscoveredSignInTests.browse(console)
            let outcome: DiscoveredSignInTests.Outcome
            do throws(SignInFailure) {
                outcome = .success(
                    try await DiscoveredSignIn.run(
                        route: DiscoveredSignInTests.route(server), settings: DiscoverySettings(), found: found,
                        caFile: nil, stateDirectory: scratch.state, console: console, noBrowser: false,
                        logger: ProxyHarness.silentLogger))
            } catch {
                outcome = .failure(error)
            }
            console.close()
            await browsing
            #expect(try outcome.get().issuer == server.baseURL)
            #expect(server.authorizeQueries.count == 2 && server.registrations == 1)
        }
    }

    @Test("nothing stands in for a discovery that fails definitively, or when no sign-in stored its metadata")
    func definitiveFailureOrNothingStored() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            server.update { $0.metadataStatus = 503 }
            await #expect(throws: DiscoveryError.self) { try await Self.discoverOrStored(server, state: scratch.state) }
            server.update { $0.metadataStatus = nil }
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            server.update { $0.metadataResource = "http://127.0.0.1:1/elsewhere" }
            do throws(DiscoveryError) {
                _ = try await Self.discoverOrStored(server, state: scratch.state)
                Issue.record("the stored metadata stood in for a resource mismatch")
            } catch {
                #expect(error == .resourceMismatch(resource: "http://127.0.0.1:1/elsewhere", upstream: server.resource))
            }
        }
    }
}
