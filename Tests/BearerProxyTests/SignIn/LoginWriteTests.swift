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

/// `login` writes the new account and its routes' tokens to the token cache file together. A running `serve`
/// polls that file; had it seen the account before the tokens (CI did, once), it would have fetched its own —
/// two refresh-token requests per scope set for one sign-in.
@Suite("login: the account and its tokens reach the token cache file in one write")
struct LoginWriteTests {
    static let password = "correct horse battery staple"

    @Test("until the sign-in and every route's token are in hand, a proxy watching the file sees nothing new")
    func oneWrite() async throws {
        try await withIdentityProvider { provider in
            let state = PersistenceIntegrationTests.temporaryState()
            let environment = [SignInHarness.passwordVariable: Self.password]
            // The proxy: another runtime on the same state directory, as `serve` in another process.
            try await SignInHarness.with(account: SignInHarness.native(provider), state: state) { proxy in
                try await SignInHarness.with(
                    account: SignInHarness.native(provider), environment: environment, state: state
                ) { login in
                    try await login.inOneWrite {
                        _ = try await login.signInWithinLimit(console: ScriptedConsole(canAsk: false))
                        for scopes in login.scopeSets { _ = try await login.tokens.accessTokenWithinLimit(for: scopes) }
                        login.persistence?.flush()
                        proxy.persistence?.reloadIfChanged(tokens: proxy.tokens, session: proxy.session)
                        #expect(!proxy.session.isSignedIn, "the proxy saw the account before its tokens")
                        #expect(proxy.tokens.allTokens.isEmpty)
                    }
                    login.persistence?.flush()
                }
                proxy.persistence?.reloadIfChanged(tokens: proxy.tokens, session: proxy.session)
                #expect(proxy.session.identity?.username == FakeIdentityProvider.User.alice.preferredUsername)
                #expect(Set(proxy.tokens.allTokens.map(\.scopes)) == Set(proxy.scopeSets))
                for scopes in proxy.scopeSets { _ = try await proxy.tokens.accessTokenWithinLimit(for: scopes) }
                // The proxy used the login's tokens: one sign-in, one refresh-token request per scope set in all.
                #expect(provider.tokenRequests.map(\.grantType) == ["password", "refresh_token", "refresh_token"])
            }
        }
    }

    @Test("a body that fails after the sign-in still records the account: nothing already done is lost")
    func failureStillWrites() async throws {
        try await withIdentityProvider { provider in
            let state = PersistenceIntegrationTests.temporaryState()
            let environment = [SignInHarness.passwordVariable: Self.password]
            try await SignInHarness.with(
                account: SignInHarness.native(provider), environment: environment, state: state
            ) { login in
                await #expect(throws: TestSupportError.self) {
                    try await login.inOneWrite {
                        _ = try await login.signInWithinLimit(console: ScriptedConsole(canAsk: false))
                        throw TestSupportError.shutDown
                    }
                }
                login.persistence?.flush()
                let store = try #require(login.persistence?.store)
                guard case .loaded(let account) = try store.load() else {
                    Issue.record("no account in the token cache file after the sign-in")
                    return
                }
                #expect(account.refreshToken == login.session.snapshot.refreshToken)
                #expect(account.identity?.username == FakeIdentityProvider.User.alice.preferredUsername)
            }
        }
    }
}
