import Foundation

@testable import BearerProxy

/// Runs a program to completion with piped stdin/stdout/stderr, off the cooperative thread pool.
enum ChildProcess {
    struct Output: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(
        _ executable: String, _ arguments: [String], stdin: String = "", environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) async throws -> Python.Result {
        let output = try await start(
            executable, arguments, stdin: stdin, environment: environment, currentDirectory: currentDirectory
        ).wait()
        return Python.Result(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }

    /// A started process whose output is collected until it exits.
    final class Running: Sendable {
        let process: Process
        private let stdoutPipe: Pipe
        private let stderrPipe: Pipe

        init(process: Process, stdout: Pipe, stderr: Pipe) {
            self.process = process
            self.stdoutPipe = stdout
            self.stderrPipe = stderr
        }

        /// Waits for exit (the reads run on a thread of their own, not the cooperative pool).
        func wait() async throws -> Output {
            let process = self.process
            let stdoutPipe = self.stdoutPipe
            let stderrPipe = self.stderrPipe
            return await withCheckedContinuation { continuation in
                // A thread of its own: blocking reads on dispatch's shared pool can starve it on 2 cores.
                Thread {
                    let out = stdoutPipe.fileHandleForReading.readDataToEndOfFile()
                    let err = stderrPipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(
                        returning: Output(
                            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                            stderr: String(decoding: err, as: UTF8.self)))
                }.start()
            }
        }

        func signal(_ signal: Int32) {
            kill(process.processIdentifier, signal)
        }
    }

    static func start(
        _ executable: String, _ arguments: [String], stdin: String = "", environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let input = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = input
        process.standardOutput = stdout
        process.standardError = stderr
        try CommandRunner.launch(process)
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        return Running(process: process, stdout: stdout, stderr: stderr)
    }
}
