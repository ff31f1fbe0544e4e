import Foundation
import Synchronization

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Faults of the machine under a real `bearer-proxy` process (#22): a wall clock that steps, a disk that is full
/// and a directory that is read-only, through the preload `Tests/Faults/bearer_faults.c`, which this builds once per test run with the system's C
/// compiler. A test makes one, adds ``environment`` to the child's, and flips the faults while the child runs.
struct MachineFaults: Sendable {
    /// The directory the preload reads its controls from.
    let directory: String

    /// A fresh set of controls: the clock as it is, the disk with room.
    init() throws {
        directory = try CommandLineTests.temporaryDirectory()
    }

    /// What to add to a child's environment for it to run under these faults.
    func environment() async throws -> [String: String] {
        ["LD_PRELOAD": try await Self.library(), "BEARER_FAULTS_DIR": directory]
    }

    /// Steps the child's wall clock (`CLOCK_REALTIME`) to `seconds` from the real one; the monotonic clock keeps
    /// going as it was, as in a real step.
    func setClockOffset(seconds: Double) throws {
        try Data("\(seconds)\n".utf8).write(to: URL(fileURLWithPath: directory + "/clock-offset"), options: .atomic)
    }

    /// Lets `seconds` pass on every clock of the child, the monotonic ones included, at once — time passing
    /// without the test waiting for it. Only ever increase it.
    func setElapsed(seconds: Double) throws {
        try Data("\(seconds)\n".utf8).write(to: URL(fileURLWithPath: directory + "/elapsed"), options: .atomic)
    }

    /// Makes every write of the child to a regular file fail with ENOSPC (`true`) or succeed again (`false`).
    func setDiskFull(_ full: Bool) throws {
        let path = directory + "/disk-full"
        if full {
            try Data().write(to: URL(fileURLWithPath: path))
        } else if FileManager.default.fileExists(atPath: path) {
            try FileManager.default.removeItem(atPath: path)
        }
    }

    /// Makes `directory` (an absolute path) and everything in it read-only for the child, as on a read-only mount:
    /// opening for writing, creating, renaming, deleting and chmod fail with EROFS (nil makes it writable again).
    /// Unlike a chmod to 0500, which the owning process may undo, the child cannot lift it.
    func setReadOnly(_ directory: String?) throws {
        let path = self.directory + "/read-only"
        if let directory {
            try Data("\(directory)\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } else if FileManager.default.fileExists(atPath: path) {
            try FileManager.default.removeItem(atPath: path)
        }
    }

    /// The preload's path, built on first use (two tests that race both build it; either result serves).
    static func library() async throws -> String {
        if let built = built.withLock({ $0 }) { return built }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Faults/bearer_faults.c").path
        let output = try CommandLineTests.temporaryDirectory() + "/bearer_faults.so"
        let compiler = ["/usr/bin/cc", "/opt/swift/usr/bin/clang"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let compiler else { throw FaultsUnavailable(reason: "no C compiler to build \(source)") }
        let result = try await CommandRunner.run(
            [compiler, "-shared", "-fPIC", "-O1", "-o", output, source, "-ldl"], timeout: .seconds(60))
        guard result.status == 0 else {
            throw FaultsUnavailable(reason: "building \(source) failed (\(result.status)): \(result.stderr)")
        }
        built.withLock { $0 = output }
        return output
    }

    private static let built = Mutex<String?>(nil)

    struct FaultsUnavailable: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }
}
