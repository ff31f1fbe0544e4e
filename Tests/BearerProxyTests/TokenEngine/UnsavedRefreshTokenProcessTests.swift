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

/// #22 item 3 with real `bearer-proxy` processes under a full disk or a read-only state directory (the fault
/// preload, ``MachineFaults``), against a provider that rotates refresh tokens with no reuse grace and revokes the
/// whole family on reuse.
///
/// A refresh token rotated while the disk is full (or the directory read-only) cannot be written; the file keeps the one the provider has just
/// retired. Before the fix the next redemption took that one for "another process rotated it", redeemed it, and the
/// provider revoked the family: the account was signed out for good, a restart included.
@Suite("A rotated refresh token that cannot be written is kept, retried and never lost (real processes)")
struct UnsavedRefreshTokenProcessTests {
    typealias Machine = SharedRefreshTokenProcessTests.Machine

    /// What keeps the rotated refresh token from the file.
    enum StorageFault: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// Every write(2) to a file fails with ENOSPC.
        case diskFull
        /// The state directory is read-only, as on a read-only mount: the write fails at its first open, the
        /// directory's lock and the redemption lock cannot be taken, and chmod cannot lift it.
        case readOnlyStateDirectory

        var testDescription: String { rawValue }

        /// The system's reason, as the status reports it.
        var reason: String {
            switch self {
            case .diskFull: "No space left on device"
            case .readOnlyStateDirectory: "Read-only file system"
            }
        }

        func set(_ on: Bool, _ faults: MachineFaults, _ machine: Machine) throws {
            switch self {
            case .diskFull: try faults.setDiskFull(on)
            case .readOnlyStateDirectory: try faults.setReadOnly(on ? machine.state.path : nil)
            }
        }
    }

    @Test(
        "a rotation that cannot be written: requests keep working, status says unsaved, the file catches up, a restart works",
        arguments: StorageFault.allCases)
    func unwritableRotation(_ fault: StorageFault) async throws {
        let faults = try MachineFaults()
        try await withIdentityProvider(SharedRefreshTokenTests.strictProvider()) { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                var machine = try SharedRefreshTokenProcessTests.machine(provider, upstream: upstream)
                for (key, value) in try await faults.environment() { machine.environment[key] = value }
                let store = TokenStore(directory: machine.state, accountKey: machine.accountKey)
                let (_, first) = try await SharedRefreshTokenProcessTests.serving(machine, count: 1) { ports in
                    let port = ports[0]
                    // Signed in, and the file holds the account's current refresh token.
                    #expect(try await TestClient.send(port: port, uri: "/r0/x").status.code == 200)
                    let before = try Self.storedAccount(store)
                    try fault.set(true, faults, machine)
                    // No token for /r1: a redemption, whose rotated refresh token cannot be written.
                    #expect(try await TestClient.send(port: port, uri: "/r1/x").status.code == 200)
                    // Another redemption: it must use the rotated token in memory, not the retired one in the file.
                    let second = try await TestClient.send(port: port, uri: "/r2/x")
                    try #require(second.status.code == 200, "signed out by the stale refresh token in the file")
                    let stillOld = try Self.storedAccount(store).refreshToken == before.refreshToken
                    #expect(stillOld, "the file could not be written, yet it changed")
                    let status = try await Self.tokenCacheStatus(port: port)
                    #expect(status["unsavedChanges"] as? Bool == true)
                    #expect(status["signInUnsaved"] as? Bool == true)
                    #expect((status["lastWriteError"] as? String)?.contains(fault.reason) == true)
                    #expect(try await Self.metric("bearer_proxy_token_cache_unsaved", port: port) == 1)
                    #expect(try await Self.metric("bearer_proxy_token_cache_write_failures_total", port: port) ?? 0 > 0)

                    try fault.set(false, faults, machine)
                    // The retry writes the rotated token (and its generation) once there is room again.
                    let saved = try await Self.waitForFile(store) { account in
                        account.refreshToken.map(provider.isRefreshTokenValid) == true
                    }
                    #expect(saved.refreshTokenGeneration ?? 0 > before.refreshTokenGeneration ?? 0)
                    let recovered = try await Self.tokenCacheStatus(port: port)
                    #expect(recovered["unsavedChanges"] as? Bool == false)
                    #expect(try await Self.metric("bearer_proxy_token_cache_unsaved", port: port) == 0)
                }
                #expect(first.map(\.status) == [0], "\(first.map(\.stderr))")
                #expect(first.allSatisfy { !$0.stderr.contains("sign-in could not be saved") })

                // A new process on the same state directory: the sign-in survived.
                let (status, second) = try await SharedRefreshTokenProcessTests.serving(machine, count: 1) { ports in
                    try await TestClient.send(port: ports[0], uri: "/r3/x").status.code
                }
                #expect(status == 200)
                #expect(second.map(\.status) == [0], "\(second.map(\.stderr))")
                #expect(provider.refusedRedemptionCount == 0)
            }
        }
    }

    /// A sibling: `login` printed "Signed in" and exited 0 while the write of its rotated refresh token failed,
    /// leaving a file whose refresh token its own redemption had retired — the next command was signed out.
    @Test("login under a full disk exits 1 and says the sign-in could not be saved, never \"Signed in\"")
    func loginUnderFullDisk() async throws {
        let faults = try MachineFaults()
        try await withIdentityProvider(SharedRefreshTokenTests.strictProvider()) { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                var machine = try SharedRefreshTokenProcessTests.machine(provider, upstream: upstream)
                for (key, value) in try await faults.environment() { machine.environment[key] = value }
                // Every route but the last has its token in the file, as after an earlier login: this login makes
                // one redemption, whose rotated refresh token cannot be written.
                for route in 0..<(SharedRefreshTokenProcessTests.scopes.count - 1) {
                    let token = try await CommandLineTests.run(
                        ["token", "/r\(route)", "--config", machine.file], environment: machine.environment)
                    #expect(token.status == 0, "\(token.stderr)")
                }

                try faults.setDiskFull(true)
                let login = try await CommandLineTests.run(
                    ["login", "--config", machine.file], environment: machine.environment)
                #expect(login.status == 1)
                #expect(login.stderr.contains("cannot save the sign-in to the token cache"), "\(login.stderr)")
                #expect(login.stderr.contains("No space left on device"))
                #expect(!login.stdout.contains("Signed in"))
                try faults.setDiskFull(false)
            }
        }
    }

    static func storedAccount(_ store: TokenStore) throws -> PersistedAccount {
        guard case .loaded(let account) = try store.load() else {
            throw StressProcessError(description: "no account in the token cache file")
        }
        return account
    }

    /// Polls the token cache file until `done` holds for its account; bounded (60 s — the retry's back-off is at
    /// most 30 s), so a fix that never writes fails instead of hanging.
    static func waitForFile(
        _ store: TokenStore, until done: (PersistedAccount) -> Bool
    ) async throws -> PersistedAccount {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if case .loaded(let account) = try store.load(), done(account) { return account }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StressProcessError(description: "the token cache file never got the rotated refresh token")
    }

    /// `/-/status`'s `tokenCache` object.
    static func tokenCacheStatus(port: Int) async throws -> [String: Any] {
        let response = try await TestClient.send(port: port, uri: "/-/status")
        let document = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return try #require(document?["tokenCache"] as? [String: Any])
    }

    /// The value of an unlabelled metric on `/-/metrics`.
    static func metric(_ name: String, port: Int) async throws -> Double? {
        let text = try await TestClient.send(port: port, uri: "/-/metrics").bodyText
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}
