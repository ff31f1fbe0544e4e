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

@Suite("logout: forget locally, revoke at the provider where the protocol allows")
struct SignOutTests {
    @Test("with a revocation endpoint (RFC 7009) the refresh token is revoked and no longer works")
    func revokes() async throws {
        try await withIdentityProvider { provider in
            let timing = SignInTiming { _ in
                provider.approveDeviceCode(userCode: provider.lastDeviceAuthorization?.userCode ?? "", as: .alice)
            }
            let state = PersistenceIntegrationTests.temporaryState()
            try await SignInHarness.with(
                account: SignInHarness.deviceCode(provider, issuer: true), state: state, timing: timing
            ) { account in
                _ = try await account.signInWithinLimit(console: ScriptedConsole(canAsk: false))
                let refreshToken = try #require(account.session.snapshot.refreshToken)
                let path = try #require(account.persistence?.store.path)
                account.persistence?.flush()
                #expect(FileManager.default.fileExists(atPath: path))

                let notes = await account.signOut()
                #expect(notes.contains("The refresh token was revoked at the identity provider."))
                #expect(provider.revocations.map(\.refreshTokenID) == [provider.refreshTokenID(of: refreshToken)])
                #expect(provider.revocations.first?.tokenTypeHint == "refresh_token")
                #expect(!provider.isRefreshTokenValid(refreshToken))
                #expect(!account.session.isSignedIn)
                #expect(!FileManager.default.fileExists(atPath: path))
            }
        }
    }

    @Test("Microsoft has no revocation endpoint: the account is forgotten here and the end-session URL is given")
    func microsoft() async throws {
        try await withIdentityProvider { provider in
            let timing = SignInTiming { _ in
                provider.approveDeviceCode(userCode: provider.lastDeviceAuthorization?.userCode ?? "", as: .alice)
            }
            try await SignInHarness.with(account: SignInHarness.deviceCode(provider), timing: timing) { account in
                _ = try await account.signInWithinLimit(console: ScriptedConsole(canAsk: false))
                let notes = await account.signOut()
                #expect(notes.contains { $0.contains("offers no token revocation") })
                #expect(
                    notes.contains(
                        "To sign out of the browser session too, open: \(provider.authority)/oauth2/v2.0/logout"))
                #expect(provider.revokedTokenCount == 0)
                #expect(!account.session.isSignedIn)
            }
        }
    }
}
