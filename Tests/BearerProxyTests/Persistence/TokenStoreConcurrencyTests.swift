import Foundation
import StateStress
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

/// Two writers in one process: the directory lock is flock(2) on a descriptor each `withLock` opens for itself,
/// and flock locks belong to the open file description, so two threads of one process exclude each other just as
/// two processes do.
@Suite("Token store: concurrent writers in one process")
struct TokenStoreConcurrencyTests {
    @Test("two threads doing 200 updates each lose none of them")
    func twoThreads() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let state = scratch.state
        let writers = ["thread-a", "thread-b"]
        let failures = try await BlockingWork.run { () -> [String] in
            let failures = Mutex<[String]>([])
            let group = DispatchGroup()
            // Both threads start together, so their updates overlap rather than run one after the other.
            let start = DispatchSemaphore(value: 0)
            for writer in writers {
                group.enter()
                let thread = Thread {
                    start.wait()
                    do {
                        try StateStress.runWriter(
                            directory: state, accountKey: "shared", iterations: 200, writer: writer, progress: { _ in })
                    } catch {
                        failures.withLock { $0.append("\(writer): \(error)") }
                    }
                    group.leave()
                }
                thread.start()
            }
            for _ in writers { start.signal() }
            let limit = TestLimits.wait
            guard group.wait(timeout: .now() + .seconds(Int(limit.components.seconds))) == .success else {
                throw TestSupportError.timedOut("waiting for both writer threads to finish", after: limit)
            }
            return failures.withLock { $0 }
        }
        #expect(failures.isEmpty)
        guard case .loaded(let account) = try scratch.store("shared").load() else {
            Issue.record("expected the account")
            return
        }
        #expect(try StateStress.census(of: account) == ["thread-a": 200, "thread-b": 200])
        #expect(account.accessTokens.count == 400)
    }
}
