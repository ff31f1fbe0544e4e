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

@Suite("browser sign-in: authorization code + PKCE with a loopback redirect, against the fake provider")
struct BrowserSignInTests {
    /// Signs in while the test plays the browser: it opens the URL the sign-in hands to the console and follows
    /// the provider's redirect to the loopback listener. Returns the sign-in's result and what the browser saw.
    static func run(
        _ account: AccountRuntime, console: ScriptedConsole = ScriptedConsole(),
        browse: @escaping @Sendable (String) async throws -> TestBrowser.Visit = { try await TestBrowser.open($0) }
    ) async throws -> (result: Result<AccountIdentity?, SignInFailure>, visit: TestBrowser.Visit?) {
        async let visit: TestBrowser.Visit? = {
            guard let url = await console.nextOpenedURL() else { return nil }
            return try await browse(url)
        }()
        let result: Result<AccountIdentity?, SignInFailure>
        do {
            result = .success(try await account.signInWithinLimit(console: console))
        } catch let failure as SignInFailure {
            result = .failure(failure)
        }
        console.close()
        return (result, try await visit)
    }

    static func query(_ url: String) -> [String: String] {
        AuthorizationCallback(target: url).parameters
    }

    @Test("success: PKCE S256, state, nonce, hints, every route's scope; the page says the tab can be closed")
    func success() async throws {
        try await withIdentityProvider { provider in
            let extra =
                #", "prompt": "select_account", "loginHint": "alice@contoso.example", "domainHint": "contoso.example""#
            try await SignInHarness.with(account: SignInHarness.browser(provider, extra: extra)) { account in
                let console = ScriptedConsole()
                let (result, visit) = try await Self.run(account, console: console)
                let identity = try result.get()
                #expect(identity?.username == FakeIdentityProvider.User.alice.preferredUsername)
                let page = try #require(visit?.final)
                #expect(page.status == .ok)
                #expect(page.bodyText.contains("Signed in"))
                #expect(page.bodyText.contains("You can close this tab"))
                #expect(!page.bodyText.contains("code="))

                // The URL was printed whether or not a browser opened.
                let url = try #require(console.opened.first)
                #expect(console.lines.contains("  " + url))
                let authorize = try #require(provider.authorizeRequests.first)
                #expect(authorize["response_type"] == "code")
                #expect(authorize["code_challenge_method"] == "S256")
                #expect(authorize["code_challenge"]?.count == 43)
                #expect(authorize["redirect_uri"]?.hasPrefix("http://127.0.0.1:") == true)
                #expect(authorize["prompt"] == "select_account")
                #expect(authorize["login_hint"] == "alice@contoso.example")
                #expect(authorize["domain_hint"] == "contoso.example")
                let scopes = Set((authorize["scope"] ?? "").split(separator: " ").map(String.init))
                #expect(
                    scopes.isSuperset(of: [
                        SignInHarness.todoScope, SignInHarness.graphScope, "openid", "offline_access",
                    ]))
                #expect((authorize["state"]?.count ?? 0) >= 32)
                #expect((authorize["nonce"]?.count ?? 0) >= 32)

                let redemption = try #require(provider.tokenRequests.first)
                #expect(redemption.grantType == "authorization_code")
                for scopes in account.scopeSets { _ = try await account.tokens.accessTokenWithinLimit(for: scopes) }
                #expect(
                    provider.tokenRequests.map(\.grantType) == ["authorization_code", "refresh_token", "refresh_token"])
            }
        }
    }

    @Test("the provider's errors in the redirect become one line saying what to do")
    func providerErrors() async throws {
        let cases: [(String, String)] = [
            ("access_denied", "The sign-in was cancelled or denied in the browser"),
            ("consent_required", "The app needs consent to the routes' permissions"),
            ("login_required", #"remove "prompt": "none""#),
            ("unauthorized_client", "check the app registration"),
        ]
        for (error, expected) in cases {
            try await withIdentityProvider { provider in
                provider.setAuthorizeOutcome(.error(error: error, description: "AADSTS65004: The user declined"))
                try await SignInHarness.with(account: SignInHarness.browser(provider)) { account in
                    let (result, visit) = try await Self.run(account)
                    guard case .failure(let failure) = result else {
                        Issue.record("\(error): signed in")
                        return
                    }
                    #expect(failure.message.contains(expected), "\(error): \(failure.message)")
                    #expect(visit?.final.bodyText.contains("Sign-in failed") == true)
                    #expect(provider.tokenRequestCount == 0)
                }
            }
        }
    }

    @Test("a redirect with another state is refused and nothing is redeemed")
    func wrongState() async throws {
        try await withIdentityProvider { provider in
            provider.setAuthorizeOutcome(.wrongState)
            try await SignInHarness.with(account: SignInHarness.browser(provider)) { account in
                let (result, visit) = try await Self.run(account)
                guard case .failure(let failure) = result else {
                    Issue.record("signed in with a forged state")
                    return
                }
                #expect(failure.message.contains("state that this sign-in did not send"))
                #expect(visit?.final.bodyText.contains("does not belong to the sign-in") == true)
                #expect(provider.tokenRequestCount == 0)
                #expect(!account.session.isSignedIn)
            }
        }
    }

    @Test("an id token whose nonce is not this sign-in's (a code from another authorization request) is refused")
    func wrongNonce() async throws {
        try await withIdentityProvider { provider in
            try await SignInHarness.with(account: SignInHarness.browser(provider)) { account in
                // The "browser" sends an authorization request with another nonce: the code it brings back is
                // genuine, but its id token names that request's nonce.
                let (result, _) = try await Self.run(account) { url in
                    try await TestBrowser.open(url.replacingOccurrences(of: "&nonce=", with: "&nonce=forged"))
                }
                guard case .failure(let failure) = result else {
                    Issue.record("signed in with another request's nonce")
                    return
                }
                #expect(failure.message.contains("nonce does not match"))
                #expect(provider.tokenRequests.map(\.grantType) == ["authorization_code"])
                #expect(!account.session.isSignedIn)
            }
        }
    }

    @Test("nobody finishes in the browser: a bounded wait, then a clear message")
    func timeout() async throws {
        try await withIdentityProvider { provider in
            let timing = SignInTiming(browserTimeout: .milliseconds(200))
            try await SignInHarness.with(account: SignInHarness.browser(provider), timing: timing) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole())
                #expect(failure.kind == .timedOut)
                #expect(failure.message.contains("Nobody finished the sign-in in the browser"))
            }
        }
    }

    @Test("redirectPort: the listener uses it; a port in use is a clear configuration error")
    func redirectPort() async throws {
        try await withIdentityProvider { provider in
            // The provider's own port is taken for sure.
            let account = SignInHarness.browser(provider, extra: #", "redirectPort": \#(provider.port)"#)
            try await SignInHarness.with(account: account) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole())
                #expect(failure.kind == .misconfigured)
                #expect(failure.message.contains("Cannot listen on 127.0.0.1:\(provider.port)"))
            }
        }
    }
}
