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

/// `status` and `/-/status` say when the token cache file lacks what memory holds (#22 item 3): since when, whether
/// the sign-in is among it, and why — never the refresh token.
@Suite("status: unsaved changes of the token cache")
struct UnsavedStatusTests {
    @Test("an unsaved rotation shows in the text and the JSON, with the system's reason and without the token")
    func unsavedRotation() async throws {
        try await withIdentityProvider { provider in
            let environment = TestAccounts.environment(provider)
            try await SignInHarness.with(
                account: TestAccounts.refreshToken(provider), environment: environment,
                state: PersistenceIntegrationTests.temporaryState()
            ) { account in
                let persistence = try #require(account.persistence)
                #expect(StatusReport(account: account).unsaved == nil)
                let secret = "rotated-refresh-token-that-must-not-show"
                account.session.rotated(refreshToken: secret, identity: nil)
                persistence.failedToWrite(
                    StateError.cannotWrite(path: persistence.store.path, reason: "No space left on device"),
                    session: account.session)
                let report = StatusReport(account: account)
                #expect(report.text.contains("token cache: the sign-in (refresh token) is not saved for"))
                #expect(report.text.contains("No space left on device"))
                let json = String(decoding: report.json, as: UTF8.self)
                let document = try JSONSerialization.jsonObject(with: report.json) as? [String: Any]
                let tokenCache = try #require(document?["tokenCache"] as? [String: Any])
                #expect(tokenCache["unsavedChanges"] as? Bool == true)
                #expect(tokenCache["signInUnsaved"] as? Bool == true)
                #expect(tokenCache["failedWrites"] as? Int == 1)
                #expect(tokenCache["unsavedSince"] is String)
                let leaked = report.text.contains(secret) || json.contains(secret)
                #expect(!leaked)
            }
        }
    }
}
