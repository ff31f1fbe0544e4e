import Foundation

@testable import BearerProxy

/// `bearer-proxy _stress-state` as a child process: a real second process writing the token cache with our code.
///
/// The child prints the number of updates it has completed, one per line (``StateStress/runWriter``), which is
/// how the test knows how far it got — no sleeping and hoping. A watchdog kills it after a minute so a hung child
/// fails the test instead of hanging it. Not Sendable: one test thread (see ``BlockingWork``) drives it.
final class StressProcess {
    let process: Process
    private let output: Pipe
    private let errors: Pipe
    private let watchdog: DispatchWorkItem
    /// Stdout not yet split into lines.
    private var buffered = Data()
    /// The highest number of completed updates the child has reported.
    private var completed = 0

    /// The writer name the child uses in the tokens it adds.
    var writer: String { "pid-\(process.processIdentifier)" }

    /// The `bearer-proxy` executable: the products directory holds it next to the test bundle (as
    /// CommandLineTests finds it); `BEARER_PROXY_EXECUTABLE` overrides.
    static var executable: String {
        if let path = ProcessInfo.processInfo.environment["BEARER_PROXY_EXECUTABLE"] { return path }
        let products =
            Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return products.appendingPathComponent("bearer-proxy").path
    }

    init(state: StateDirectory, accountKey: String, iterations: Int) throws {
        let executable = Self.executable
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw StressProcessError(description: "no bearer-proxy executable at \(executable)")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "_stress-state", "--state-dir", state.path, "--account", accountKey, "--iterations", String(iterations),
        ]
        output = Pipe()
        errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try CommandRunner.launch(process)
        let pid = process.processIdentifier
        // Fires only for a child still running after a minute (it is cancelled as soon as the child has ended).
        watchdog = DispatchWorkItem { _ = Foundation.kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
    }

    // A test that fails half-way must not leave a writer running for the watchdog's minute.
    deinit {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        watchdog.cancel()
    }

    /// Blocks until the child reports at least `count` completed updates; returns the number reported.
    /// Throws, with the child's stderr, if it exits first.
    func waitForProgress(atLeast count: Int) throws -> Int {
        while true {
            if completed >= count { return completed }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty {
                let status = waitForExit()
                throw StressProcessError(
                    description: "bearer-proxy _stress-state stopped after \(completed) updates "
                        + "(status \(status.status), \(status.reason)): \(status.stderr)")
            }
            consume(data)
        }
    }

    /// Spins until `path` exists — for a temporary file, until the child is between creating it and renaming it
    /// into place — or ten seconds pass; returns whether it appeared. No sleep: the window lasts a few writes and
    /// an fsync, so only a tight loop reliably lands in it.
    func waitForFile(_ path: String) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if access(path, F_OK) == 0 { return true }
        }
        return false
    }

    /// Sends SIGKILL, waits for the child to die, and returns how many updates it reported in all.
    func kill() -> (completed: Int, exit: Exit) {
        Foundation.kill(process.processIdentifier, SIGKILL)
        let exit = waitForExit()
        consume(output.fileHandleForReading.readDataToEndOfFile())
        return (completed, exit)
    }

    /// How the child ended.
    struct Exit: Sendable {
        var status: Int32
        var reason: Process.TerminationReason
        var stderr: String
        var killed: Bool { reason == .uncaughtSignal && status == SIGKILL }
    }

    /// Waits for the child to end on its own (draining its output so it can never block on a full pipe).
    func waitForExit() -> Exit {
        consume(output.fileHandleForReading.readDataToEndOfFile())
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        return Exit(status: process.terminationStatus, reason: process.terminationReason, stderr: stderr)
    }

    private func consume(_ data: Data) {
        buffered.append(data)
        while let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
            buffered.removeSubrange(buffered.startIndex...newline)
            if let number = Int(line) { completed = max(completed, number) }
        }
    }
}

/// The stress child could not be run, or stopped unexpectedly.
struct StressProcessError: Error, CustomStringConvertible {
    var description: String
}
