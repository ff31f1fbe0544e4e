import Foundation
import Logging
import NIOPosix
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

/// The account runtime of an interactive flow against the fake identity provider, built as `bearer-proxy login`
/// builds it (``AccountRuntime/make``), for tests that drive ``AccountRuntime/signIn(console:)`` — the call
/// `login` and `serve` make — with a scripted terminal.
enum SignInHarness {
    static let passwordVariable = "TEST_PASSWORD"
    static let todoScope = "api://todo/ToDoList.Read"
    static let graphScope = "https://graph.microsoft.com/User.Read"
    /// Two routes with two scope sets, as in the MSAL tutorial (a protected API and Microsoft Graph).
    static let twoRoutes = """
        [ { "prefix": "/todo", "upstream": "https://todo.example", "scopes": ["\(todoScope)"] },
          { "prefix": "/graph", "upstream": "https://graph.example", "scopes": ["\(graphScope)"] } ]
        """

    static func native(
        _ provider: FakeIdentityProvider, username: String = FakeIdentityProvider.User.alice.preferredUsername,
        challenge: String = "password", clientID: String = FakeIdentityProvider.Client.publicClientID
    ) -> String {
        let password = challenge == "password" ? #", "passwordEnv": "\#(passwordVariable)""# : ""
        return #"{ "flow": "native", "authority": "\#(provider.authority)", "clientId": "\#(clientID)", "#
            + #""username": "\#(username)", "challenge": "\#(challenge)"\#(password) }"#
    }

    static func deviceCode(_ provider: FakeIdentityProvider, issuer: Bool = false) -> String {
        let endpoint = issuer ? #""issuer": "\#(provider.oidcIssuer)""# : #""authority": "\#(provider.authority)""#
        return #"{ "flow": "device-code", \#(endpoint), "clientId": "\#(FakeIdentityProvider.Client.publicClientID)" }"#
    }

    static func browser(_ provider: FakeIdentityProvider, extra: String = "") -> String {
        #"{ "flow": "browser", "authority": "\#(provider.authority)", "#
            + #""clientId": "\#(FakeIdentityProvider.Client.publicClientID)"\#(extra) }"#
    }

    /// Runs `body` with the runtime of `account`, then releases it.
    static func with<T>(
        account: String, routes: String = twoRoutes, environment: [String: String] = [:],
        state: StateDirectory? = nil, timing: SignInTiming = SignInTiming(),
        now: @escaping @Sendable () -> Date = { Date() }, _ body: (AccountRuntime) async throws -> T
    ) async throws -> T {
        let configuration = try TestConfigurations.make(routes: routes, account: account, environment: environment)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let runtime = try AccountRuntime.make(
                configuration: configuration, stateDirectory: state, environment: environment, eventLoopGroup: group,
                devIssuerURL: "http://127.0.0.1:8080", logger: ProxyHarness.silentLogger, signInTiming: timing, now: now
            )
            do {
                let result = try await body(runtime)
                try await runtime.shutdownWithinLimit()
                try await group.shutdownGracefully()
                return result
            } catch {
                try? await runtime.shutdownWithinLimit()
                throw error
            }
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// The sign-in's failure, or a test failure if it succeeded.
    static func failure(
        _ runtime: AccountRuntime, console: any SignInConsole, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> SignInFailure {
        do {
            let identity = try await runtime.signInWithinLimit(console: console)
            Issue.record(
                "signed in as \(String(describing: identity)); expected a failure", sourceLocation: sourceLocation)
            throw TestSupportError.shutDown
        } catch let failure as SignInFailure {
            #expect(!runtime.session.isSignedIn, sourceLocation: sourceLocation)
            return failure
        }
    }
}
