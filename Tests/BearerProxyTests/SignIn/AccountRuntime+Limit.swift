@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

extension AccountRuntime {
    /// ``AccountRuntime/signIn(console:options:)`` as the tests call it: a sign-in that has not ended after
    /// ``TestLimits/wait`` fails its test with `TestSupportError.timedOut` instead of hanging the suite. Its own
    /// failures come out unchanged (`SignInFailure`).
    func signInWithinLimit(
        console: any SignInConsole, options: SignInOptions = SignInOptions()
    ) async throws -> AccountIdentity? {
        try await withTimeout(waitingFor: "the sign-in to end") {
            try await self.signIn(console: console, options: options)
        }
    }

    /// ``AccountRuntime/shutdown()``, bounded the same way.
    func shutdownWithinLimit() async throws {
        try await withTimeout(waitingFor: "the account runtime to shut down") { await self.shutdown() }
    }
}
