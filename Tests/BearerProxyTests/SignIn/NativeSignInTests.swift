import Foundation
import Synchronization
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

@Suite("native sign-in: Entra External ID native authentication against the fake provider")
struct NativeSignInTests {
    static let alice = FakeIdentityProvider.User.alice
    static let bob = FakeIdentityProvider.User.bob
    static let password = "correct horse battery staple"

    @Test("password from passwordEnv: initiate → challenge → token, then one refresh per scope set")
    func passwordFromEnvironment() async throws {
        try await withIdentityProvider { provider in
            let environment = [SignInHarness.passwordVariable: Self.password]
            try await SignInHarness.with(account: SignInHarness.native(provider), environment: environment) {
                account in
                let console = ScriptedConsole(canAsk: false)
                let identity = try await account.signInWithinLimit(console: console)
                #expect(identity?.username == Self.alice.preferredUsername)
                #expect(identity?.objectID == Self.alice.oid)
                #expect(console.questions.isEmpty)
                for scopes in account.scopeSets { _ = try await account.tokens.accessTokenWithinLimit(for: scopes) }

                let native = provider.nativeRequests
                #expect(native.map(\.endpoint) == [.initiate, .challenge, .token])
                // challenge_type always offers redirect (the API requires it) and the latest continuation token
                // is sent each time.
                for request in native.prefix(2) {
                    #expect(request.parameters["challenge_type"]?.split(separator: " ").contains("redirect") == true)
                }
                #expect(native[1].parameters["continuation_token"] == native[0].issuedContinuationToken)
                let grants = provider.tokenRequests.map(\.grantType)
                #expect(grants == ["password", "refresh_token", "refresh_token"])
                #expect(provider.tokenRequestCount(forScope: SignInHarness.todoScope) == 1)
                #expect(provider.tokenRequestCount(forScope: SignInHarness.graphScope) == 1)
            }
        }
    }

    @Test("without passwordEnv the password is asked at a hidden prompt")
    func passwordPrompt() async throws {
        try await withIdentityProvider { provider in
            try await SignInHarness.with(account: SignInHarness.native(provider)) { account in
                let console = ScriptedConsole(answers: [Self.password])
                _ = try await account.signInWithinLimit(console: console)
                #expect(
                    console.questions == [.init(text: "Password for \(Self.alice.preferredUsername): ", hidden: true)])
                #expect(account.session.isSignedIn)
            }
        }
    }

    @Test("no password variable and no terminal: a message naming what to set")
    func noTerminal() async throws {
        try await withIdentityProvider { provider in
            try await SignInHarness.with(account: SignInHarness.native(provider)) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole(canAsk: false))
                #expect(failure.kind == .misconfigured)
                #expect(failure.message.contains("set \(SignInHarness.passwordVariable)"))
            }
        }
    }

    @Test("email one-time passcode: where it was sent is shown, the code is read, tokens follow")
    func oneTimePasscode() async throws {
        try await withIdentityProvider { provider in
            let account = SignInHarness.native(provider, username: Self.bob.preferredUsername, challenge: "otp")
            try await SignInHarness.with(account: account) { account in
                let console = ScriptedConsole { _ in provider.lastOneTimeCode(for: Self.bob) }
                let identity = try await account.signInWithinLimit(console: console)
                #expect(identity?.objectID == Self.bob.oid)
                #expect(console.lines.contains { $0.contains("was sent to") && $0.contains("*") })
                #expect(console.questions.first?.text.contains("8-digit code") == true)
                #expect(console.questions.first?.hidden == false)
                #expect(provider.tokenRequests.map(\.grantType) == ["oob"])
            }
        }
    }

    @Test("resend: a new code is sent and the old one no longer works")
    func resend() async throws {
        try await withIdentityProvider { provider in
            let account = SignInHarness.native(provider, username: Self.bob.preferredUsername, challenge: "otp")
            try await SignInHarness.with(account: account) { account in
                let console = ScriptedConsole(replies: [{ "resend" }, { provider.lastOneTimeCode(for: Self.bob) }])
                _ = try await account.signInWithinLimit(console: console)
                #expect(provider.oneTimeCodesSent(to: Self.bob) == 2)
                #expect(console.lines.contains { $0.contains("previous one no longer works") })
            }
        }
    }

    @Test("a wrong code says so and asks again; three wrong codes end the sign-in")
    func wrongCode() async throws {
        try await withIdentityProvider { provider in
            let account = SignInHarness.native(provider, username: Self.bob.preferredUsername, challenge: "otp")
            try await SignInHarness.with(account: account) { account in
                let console = ScriptedConsole(replies: [{ "00000000" }, { provider.lastOneTimeCode(for: Self.bob) }])
                _ = try await account.signInWithinLimit(console: console)
                #expect(console.lines.contains("That code is not right; check it and try again (or type \"resend\")."))
            }
            try await SignInHarness.with(account: account) { account in
                let console = ScriptedConsole { _ in "00000000" }
                let failure = try await SignInHarness.failure(account, console: console)
                #expect(failure.message == "The one-time passcode is wrong; run: bearer-proxy login to get a new one.")
                #expect(console.questions.count == NativeSignIn.codeAttempts)
            }
        }
    }

    @Test("an expired code: said clearly, a new one is sent once, and the sign-in completes")
    func expiredCode() async throws {
        try await withIdentityProvider { provider in
            let account = SignInHarness.native(provider, username: Self.bob.preferredUsername, challenge: "otp")
            try await SignInHarness.with(account: account) { account in
                let console = ScriptedConsole(replies: [
                    {
                        provider.expireContinuationTokens()
                        return provider.lastOneTimeCode(for: Self.bob)
                    },
                    { provider.lastOneTimeCode(for: Self.bob) },
                ])
                _ = try await account.signInWithinLimit(console: console)
                #expect(console.lines.contains("The code has expired; sending a new one."))
                #expect(provider.oneTimeCodesSent(to: Self.bob) == 2)
            }
        }
    }

    @Test("the server's redirect (the account needs the browser) names the config change")
    func redirect() async throws {
        try await withIdentityProvider { provider in
            // Alice signs in with a password; offering only one-time passcodes makes the server answer redirect.
            try await SignInHarness.with(account: SignInHarness.native(provider, challenge: "otp")) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole(answers: []))
                #expect(failure.kind == .misconfigured)
                #expect(failure.message.contains(#"Set "flow": "browser" in routes.json"#))
            }
        }
    }

    /// Every documented error, with the line the person reads.
    static let errorCases:
        [(
            name: String, setUp: @Sendable (FakeIdentityProvider) -> Void, username: String?,
            clientID: String?, expected: String
        )] = [
            (
                "user_not_found", { _ in }, "nobody@contoso.example", nil,
                "No account nobody@contoso.example in this tenant"
            ),
            (
                "wrong password (invalid_grant 50126)", { _ in }, nil, nil,
                "Wrong password for \(alice.preferredUsername)"
            ),
            (
                "nativeauthapi_disabled", { _ in }, nil, FakeIdentityProvider.Client.confidentialClientID,
                "Native authentication is not enabled for the app"
            ),
            (
                "unsupported_challenge_type",
                { $0.enqueue(.error(error: "unsupported_challenge_type", codes: [55103]), at: .initiate) }, nil, nil,
                "supports none of the sign-in methods bearer-proxy offers"
            ),
            (
                "expired_token", { $0.enqueue(.error(error: "expired_token", codes: [552003]), at: .challenge) }, nil,
                nil, "The sign-in took too long and expired on the server; run: bearer-proxy login"
            ),
            (
                "mfa_required", { $0.setMFARequired(true, for: alice) }, nil, nil,
                "must complete multi-factor authentication"
            ),
            (
                "registration_required", { $0.setRegistrationRequired(true, for: alice) }, nil, nil,
                "must first register a strong authentication method"
            ),
            (
                "password reset required (50142)", { $0.setPasswordResetRequired(true, for: alice) }, nil, nil,
                "must be reset first"
            ),
        ]

    @Test("each documented error becomes one line that says what to do", arguments: 0..<8)
    func documentedErrors(index: Int) async throws {
        let errorCase = Self.errorCases[index]
        try await withIdentityProvider { provider in
            errorCase.setUp(provider)
            let account = SignInHarness.native(
                provider, username: errorCase.username ?? Self.alice.preferredUsername,
                clientID: errorCase.clientID ?? FakeIdentityProvider.Client.publicClientID)
            let environment = [SignInHarness.passwordVariable: index == 1 ? "wrong" : Self.password]
            try await SignInHarness.with(account: account, environment: environment) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole(canAsk: false))
                #expect(failure.message.contains(errorCase.expected), "\(errorCase.name): \(failure.message)")
                #expect(!failure.message.contains("\n"))
                #expect(!failure.message.contains(Self.password))
            }
        }
    }
}
