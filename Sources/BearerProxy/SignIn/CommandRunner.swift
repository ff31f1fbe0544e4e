import Dispatch
import Foundation
import Synchronization

/// Runs a program to completion with a deadline, without blocking the cooperative thread pool: the waiting happens
/// on threads of its own, and a program past its deadline is killed.
enum CommandRunner {
    /// Held while a process is launched. swift-corelibs-foundation's `Process.run()` crashed here (a bad `memcpy`
    /// inside it) when two processes were launched at the same moment, so every launch in the program — and in its
    /// tests — goes through ``launch(_:)``, one at a time. A launch takes microseconds; the waits are not locked.
    private static let launching = Mutex(())

    /// Starts `process`, never at the same time as another launch.
    static func launch(_ process: Process) throws {
        try launching.withLock { _ in try process.run() }
    }

    struct Output: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    enum Failure: Error {
        case cannotStart(String)
        case timedOut
    }

    /// Runs `arguments` (found through `PATH` when the first is not a path) and collects its output.
    static func run(_ arguments: [String], timeout: Duration) async throws(Failure) -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        do {
            try launch(process)
        } catch {
            throw .cannotStart("\(error)")
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let run = RunState()
        let result: Output? = await withCheckedContinuation { continuation in
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                guard !run.finished.load(ordering: .acquiring), process.isRunning else { return }
                run.timedOut.store(true, ordering: .releasing)
                // SIGKILL, not terminate()'s SIGTERM: a child started by Foundation's Process may not die of
                // SIGTERM (seen here with `sleep`), and a program past its deadline is owed no grace.
                kill(process.processIdentifier, SIGKILL)
            }
            // The blocking reads and the wait run on threads of their own, never on dispatch's shared pool: with
            // few cores that pool can be exhausted, and the timeout above must always be able to run.
            let errorReader = Thread {
                let data = stderr.fileHandleForReading.readDataToEndOfFile()
                run.errorOutput.withLock { $0 = data }
                run.errorRead.signal()
            }
            errorReader.start()
            Thread {
                // Read both pipes to the end before waiting, so a chatty program cannot fill a pipe and stall.
                let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
                run.errorRead.wait()
                process.waitUntilExit()
                run.finished.store(true, ordering: .releasing)
                guard !run.timedOut.load(ordering: .acquiring) else {
                    continuation.resume(returning: nil)
                    return
                }
                continuation.resume(
                    returning: Output(
                        status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
                        stderr: String(decoding: run.errorOutput.withLock { $0 }, as: UTF8.self)))
            }.start()
        }
        guard let result else { throw .timedOut }
        return result
    }
}

/// What the dispatch closures of one run share: set once each, read after the process has exited.
private final class RunState: Sendable {
    let timedOut = Atomic<Bool>(false)
    let finished = Atomic<Bool>(false)
    let errorRead = DispatchSemaphore(value: 0)
    let errorOutput = Mutex(Data())
}
