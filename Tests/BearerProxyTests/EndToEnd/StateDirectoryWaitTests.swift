import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

#if canImport(Glibc)
    import Glibc
#endif

/// The state directory's lock held by a process that does not let go — stopped inside a write, or on a disk that
/// hangs — played by a process that takes it and sleeps, and the temporary file of a writer killed between its write and its
/// rename; on real `bearer-proxy` processes.
@Suite("Processes: waits on the state directory are bounded and say what they wait for; leftovers are removed")
struct StateDirectoryWaitTests {
    /// Whether another process holds the directory's lock at `path` now.
    static func isHeld(_ path: String) -> Bool {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return true }
        flock(descriptor, LOCK_UN)
        return false
    }

    @Test(
        "a holder that never lets go: status answers at once, logout ROUTE gives up in time and says what it waited for"
    )
    func holderThatNeverLetsGo() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                #expect(try await files.run(["login", "mcp"]).status == 0)
                // The first command creates the dev account's signing key (under the lock); later ones only read it.
                #expect(try await files.run(["status"]).status == 0)
                let lock = files.stateDirectory.path + "/.lock"
                // A process that takes the lock and never lets go; killed, it lets go (the kernel's flock).
                let hold =
                    "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(120)"
                _ = try await ChildProcess.withRunning("/usr/bin/env", ["python3", "-c", hold, lock]) { holder in
                    try await withTimeout(waitingFor: "the holder to take the state directory's lock") {
                        while !Self.isHeld(lock) { try await Task.sleep(for: .milliseconds(5)) }
                    }
                    // Reading needs no lock.
                    let status = try await files.run(["status"])
                    #expect(status.status == 0, "\(status.stderr)")
                    #expect(status.stdout.contains("discovered: signed-in"), "\(status.stdout)")

                    // A write waits, says for what, and gives up at the bound instead of hanging.
                    let logout = try await files.run(["logout", "mcp"])
                    #expect(logout.status == 1, "\(logout.stdout)")
                    #expect(
                        logout.stderr.contains("waiting for the state directory's lock \(lock)"), "\(logout.stderr)")
                    #expect(logout.stderr.contains("another process has held this lock for over"), "\(logout.stderr)")
                    holder.signal(SIGKILL)
                }
                // Once the holder is gone, the same command works.
                #expect(try await files.run(["logout", "mcp"]).status == 0)
            }
        }
    }

    @Test("a temporary file left by a writer killed mid-write is removed at the next start; other files stay")
    func leftoversRemoved() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                let state = files.stateDirectory
                try state.prepare()
                let leftovers = [".discovered-signin-0123.json.4242.tmp", ".tokens-abc.json.77.tmp"]
                let kept = ["notes.tmp", ".lock.tmp"]
                for name in leftovers + kept {
                    #expect(FileManager.default.createFile(atPath: state.path + "/" + name, contents: Data("x".utf8)))
                }
                #expect(try await files.run(["status"]).status == 0)
                for name in leftovers { #expect(!FileManager.default.fileExists(atPath: state.path + "/" + name)) }
                for name in kept { #expect(FileManager.default.fileExists(atPath: state.path + "/" + name)) }
            }
        }
    }
}
