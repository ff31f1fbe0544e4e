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

@Suite("Command line: firebase login and status")
struct FirebaseCommandLineTests {
    @Test("login through Firebase with $BROWSER (curl plays the browser); status shows uid, email, oid — no secrets")
    func loginAndStatus() async throws {
        try await FirebaseHarness.withFirebase { firebase in
            let (file, directory) = try InteractiveCommandLineTests.configuration(account: #"{ "flow": "dev" }"#)
            let routes = FirebaseHarness.routes()
            try Data(#"{ "account": \#(FirebaseHarness.microsoft(firebase)), "routes": \#(routes) }"#.utf8).write(
                to: URL(fileURLWithPath: file))
            let environment = InteractiveCommandLineTests.environment(
                state: directory + "/state",
                FirebaseHarness.environment(firebase, ["BROWSER": "curl --silent --location --output /dev/null"]))
            let login = try await CommandLineTests.run(["login", "--config", file], environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.contains("Signed in (firebase)."))
            let uid = try #require(firebase.accounts.first?.localID)
            let status = try await CommandLineTests.run(["status", "--config", file], environment: environment)
            #expect(status.stdout.contains("Firebase uid \(uid)"), "\(status.stdout)")
            #expect(status.stdout.contains("oid \(FakeFirebase.MicrosoftUser.alice.oid)"))
            #expect(!status.stdout.contains(FakeFirebase.MicrosoftUser.alice.sub))
            #expect(status.stdout.contains("provider-access"))
            #expect(status.stdout.contains("not refreshable"))
            let output = login.stdout + login.stderr + status.stdout + status.stderr
            #expect(!output.contains(firebase.apiKey))
            let refreshToken = try #require(firebase.latestRefreshToken(for: uid))
            #expect(!output.contains(refreshToken))
            let token = try await CommandLineTests.run(["token", "/api", "--config", file], environment: environment)
            #expect(firebase.verifyIDToken(token.stdout.trimmingCharacters(in: .newlines)) == uid)
        }
    }

    @Test("login whose Microsoft token has no life left when it arrives: stored, exit 0, and it says so")
    func shortLivedMicrosoftToken() async throws {
        var configuration = FakeFirebase.Configuration()
        configuration.oauthExpireIn = .int(0)
        try await FirebaseHarness.withFirebase(configuration) { firebase in
            let (file, directory) = try InteractiveCommandLineTests.configuration(account: #"{ "flow": "dev" }"#)
            try Data(
                #"{ "account": \#(FirebaseHarness.microsoft(firebase)), "routes": \#(FirebaseHarness.routes()) }"#.utf8
            ).write(to: URL(fileURLWithPath: file))
            let environment = InteractiveCommandLineTests.environment(
                state: directory + "/state",
                FirebaseHarness.environment(firebase, ["BROWSER": "curl --silent --location --output /dev/null"]))
            let login = try await CommandLineTests.run(["login", "--config", file], environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.contains("Signed in (firebase)."))
            #expect(login.stdout.contains("The Microsoft access token from Firebase is short-lived"), "\(login.stdout)")
            #expect(login.stdout.contains("provider-access routes (/graph) answer 401"))
            #expect(!login.stderr.contains("run: bearer-proxy login"))
            // The sign-in is stored: the firebase-id route's token comes from it without another sign-in.
            let uid = try #require(firebase.accounts.first?.localID)
            let token = try await CommandLineTests.run(["token", "/api", "--config", file], environment: environment)
            #expect(firebase.verifyIDToken(token.stdout.trimmingCharacters(in: .newlines)) == uid)
            #expect(firebase.signInWithIdpRequests.count == 1)
        }
    }
}
