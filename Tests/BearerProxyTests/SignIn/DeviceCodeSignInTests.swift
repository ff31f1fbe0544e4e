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

@Suite("device-code sign-in (RFC 8628) against the fake provider")
struct DeviceCodeSignInTests {
    /// Records each wait between polls (returning at once) and runs `onPoll(n)` before the n-th poll.
    final class PollClock: Sendable {
        private let waits = Mutex<[Duration]>([])
        private let onPoll: @Sendable (Int) -> Void

        init(onPoll: @escaping @Sendable (Int) -> Void) {
            self.onPoll = onPoll
        }

        var recorded: [Duration] { waits.withLock { $0 } }

        var timing: SignInTiming {
            SignInTiming { [self] duration in
                let n = waits.withLock { value -> Int in
                    value.append(duration)
                    return value.count
                }
                onPoll(n)
            }
        }
    }

    static func userCode(_ provider: FakeIdentityProvider) -> String {
        provider.lastDeviceAuthorization?.userCode ?? ""
    }

    @Test("the provider's message is shown, polls wait `interval`, approval signs in; then a refresh per scope set")
    func approved() async throws {
        try await withIdentityProvider { provider in
            let clock = PollClock { n in
                if n == 2 { provider.approveDeviceCode(userCode: Self.userCode(provider), as: .alice) }
            }
            try await SignInHarness.with(account: SignInHarness.deviceCode(provider), timing: clock.timing) { account in
                let console = ScriptedConsole(canAsk: false)
                let identity = try await account.signInWithinLimit(console: console)
                #expect(identity?.username == FakeIdentityProvider.User.alice.preferredUsername)
                let code = Self.userCode(provider)
                #expect(console.lines.contains { $0.contains("enter the code \(code)") })
                #expect(clock.recorded == [.seconds(5), .seconds(5)])
                #expect(console.waits == 2)
                for scopes in account.scopeSets { _ = try await account.tokens.accessTokenWithinLimit(for: scopes) }
                #expect(provider.tokenRequestCount(forScope: SignInHarness.todoScope) == 1)
                #expect(provider.tokenRequestCount(forScope: SignInHarness.graphScope) == 1)
            }
        }
    }

    @Test("slow_down adds 5 seconds to the interval (RFC 8628 §3.5)")
    func slowDown() async throws {
        try await withIdentityProvider { provider in
            provider.enqueueDevicePoll(.slowDown)
            let clock = PollClock { n in
                if n == 2 { provider.approveDeviceCode(userCode: Self.userCode(provider), as: .alice) }
            }
            try await SignInHarness.with(account: SignInHarness.deviceCode(provider), timing: clock.timing) { account in
                _ = try await account.signInWithinLimit(console: ScriptedConsole(canAsk: false))
                #expect(clock.recorded == [.seconds(5), .seconds(10)])
            }
        }
    }

    @Test("through an OpenID Connect issuer's discovery document")
    func discovery() async throws {
        try await withIdentityProvider { provider in
            let clock = PollClock { n in
                if n == 1 { provider.approveDeviceCode(userCode: Self.userCode(provider), as: .bob) }
            }
            let account = SignInHarness.deviceCode(provider, issuer: true)
            try await SignInHarness.with(account: account, timing: clock.timing) { account in
                let identity = try await account.signInWithinLimit(console: ScriptedConsole(canAsk: false))
                #expect(identity?.objectID == FakeIdentityProvider.User.bob.oid)
            }
        }
    }

    static let endings: [(name: String, act: @Sendable (FakeIdentityProvider) -> Void, expected: String)] = [
        (
            "declined", { $0.declineDeviceCode(userCode: userCode($0)) },
            "The sign-in was declined in the browser; run: bearer-proxy login to try again."
        ),
        ("expired", { $0.expireDeviceCode(userCode: userCode($0)) }, "expired before the sign-in was completed"),
        (
            "bad_verification_code", { $0.enqueue(.error(error: "bad_verification_code", codes: [70018])) },
            "no longer knows this sign-in code"
        ),
    ]

    @Test("declined, expired and unknown codes end the sign-in with what to do", arguments: 0..<3)
    func endings(index: Int) async throws {
        let ending = Self.endings[index]
        try await withIdentityProvider { provider in
            let clock = PollClock { n in if n == 1 { ending.act(provider) } }
            try await SignInHarness.with(account: SignInHarness.deviceCode(provider), timing: clock.timing) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole(canAsk: false))
                #expect(failure.message.contains(ending.expected), "\(ending.name): \(failure.message)")
                #expect(clock.recorded.count == 1)
            }
        }
    }

    @Test("cancelling the wait (Ctrl-C) stops polling and says so")
    func cancelled() async throws {
        try await withIdentityProvider { provider in
            let timing = SignInTiming { _ in throw CancellationError() }
            try await SignInHarness.with(account: SignInHarness.deviceCode(provider), timing: timing) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole(canAsk: false))
                #expect(failure == .cancelled)
                #expect(provider.devicePollCount == 0)
            }
        }
    }
}
