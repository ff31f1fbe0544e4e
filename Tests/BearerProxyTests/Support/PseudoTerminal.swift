import Foundation
import Subprocess
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

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// A pseudo terminal (posix_openpt) for running the real `bearer-proxy` binary as if a person sat at it: its
/// stdin, stdout and stderr are the terminal; the test types into the other side and reads what the screen shows
/// — including whatever the terminal itself echoes, which is how a hidden prompt is checked.
final class PseudoTerminal: Sendable {
    private let primary: Int32
    private let secondaryPath: String
    private let screen = Screen()
    private let changed = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    init() throws {
        let pty = try PseudoTerminalCalls()
        primary = pty.open(O_RDWR | O_NOCTTY)
        guard primary >= 0, pty.grant(primary) == 0, pty.unlock(primary) == 0, let name = pty.name(primary) else {
            throw TestSupportError.shutDown
        }
        secondaryPath = String(cString: name)
        let screen = self.screen
        let changed = self.changed.continuation
        let descriptor = primary
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }  // EIO once every process holding the other side has closed it
                screen.bytes.withLock { $0.append(contentsOf: buffer[0..<count]) }
                changed.yield()
            }
            screen.ended.withLock { $0 = true }
            changed.finish()
        }.start()
    }

    /// Runs `executable` with the terminal as its stdin, stdout and stderr, and `body` while it runs (the person at
    /// the keyboard); returns its exit status (128 + the signal that ended it) once it has exited. If `body` throws,
    /// the program is killed (see ``ChildProcess``), as it is past ``TestLimits/child``.
    func run(
        _ executable: String, _ arguments: [String], environment: [String: String],
        _ body: (ChildProcess.Running) async throws -> Void
    ) async throws -> Int32 {
        // One descriptor of the terminal for each of the three; swift-subprocess closes ours once it has started
        // the program, so the program's are the last and the reading thread sees EIO when it exits.
        let stdin = open(secondaryPath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard stdin >= 0 else { throw TestSupportError.shutDown }
        let stdout = fcntl(stdin, F_DUPFD_CLOEXEC, 0)
        let stderr = stdout >= 0 ? fcntl(stdin, F_DUPFD_CLOEXEC, 0) : -1
        guard stderr >= 0 else {
            for descriptor in [stdin, stdout] where descriptor >= 0 { close(descriptor) }
            throw TestSupportError.shutDown
        }
        let what = ([executable] + arguments).joined(separator: " ") + " at the terminal"
        let result = try await ChildWatchdog.run(what: what) { watchdog in
            try await Subprocess.run(
                CommandRunner.executable(executable), arguments: Arguments(arguments),
                environment: ChildProcess.environment(environment),
                input: .fileDescriptor(FileDescriptor(rawValue: stdin), closeAfterSpawningProcess: true),
                output: .fileDescriptor(FileDescriptor(rawValue: stdout), closeAfterSpawningProcess: true),
                error: .fileDescriptor(FileDescriptor(rawValue: stderr), closeAfterSpawningProcess: true)
            ) { execution in
                let running = ChildProcess.Running(execution)
                watchdog.arm { running.signal(SIGKILL) }
                do {
                    try await body(running)
                } catch {
                    running.signal(SIGKILL)  // at once, as ChildProcess.withRunning does
                    throw error
                }
            }
        }
        // The program has exited, but what it wrote last may still wait in the terminal for the reading thread.
        await drained()
        return CommandRunner.status(result.terminationStatus)
    }

    /// Waits until the reading thread has read everything the program wrote: it reads until EIO, which comes as soon
    /// as the program's descriptors of the terminal have closed — at its exit, unless it left a process holding them,
    /// which the bound covers.
    private func drained() async {
        try? await withTimeout(TestLimits.wait, waitingFor: "the terminal's last output") { [self] in
            if screen.ended.withLock({ $0 }) { return }
            for await _ in changed.stream where screen.ended.withLock({ $0 }) { return }
        }
    }

    /// Everything the terminal has shown so far.
    var text: String { String(decoding: screen.bytes.withLock { $0 }, as: UTF8.self) }

    /// Waits until the screen shows `expected` (bounded by `timeout`, so a broken program fails the test).
    func waitFor(_ expected: String, timeout: Duration = TestLimits.wait) async throws {
        try await withTimeout(timeout, waitingFor: "the terminal to show \"\(expected)\"") { [self] in
            if text.contains(expected) { return }
            for await _ in changed.stream where text.contains(expected) { return }
            throw TestSupportError.shutDown
        }
    }

    /// Types `text` (a person pressing keys).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(primary, $0.baseAddress, $0.count) }
    }

    deinit {
        close(primary)
    }
}

/// What the terminal has shown, shared with the thread that reads it.
private final class Screen: Sendable {
    let bytes = Mutex(Data())
    /// The reading thread has read all there was: EIO, every process holding the other side has closed it.
    let ended = Mutex(false)
}

/// posix_openpt(3) and friends, looked up in the C library at run time: Swift's Glibc module leaves them out
/// (they need `_XOPEN_SOURCE`).
private struct PseudoTerminalCalls {
    typealias Open = @convention(c) (Int32) -> Int32
    typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

    let open: Open
    let grant: Open
    let unlock: Open
    let name: Name

    init() throws {
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                throw TestSupportError.shutDown
            }
            return unsafeBitCast(address, to: type)
        }
        open = try symbol("posix_openpt", as: Open.self)
        grant = try symbol("grantpt", as: Open.self)
        unlock = try symbol("unlockpt", as: Open.self)
        name = try symbol("ptsname", as: Name.self)
    }
}
