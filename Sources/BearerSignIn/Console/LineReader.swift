import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads one line from a file descriptor without blocking the cooperative thread pool: the blocking `read(2)`
/// runs on a Dispatch worker thread (Dispatch adds workers when one blocks). A cancelled task gets its answer (nil)
/// at once; the thread stays blocked until
/// the next byte or the end of the process, which for a sign-in prompt comes right after.
enum LineReader {
    /// The line without its ending, or nil at end of input or when the task is cancelled.
    static func readLine(from descriptor: Int32, onCancel: @escaping @Sendable () -> Void = {}) async -> String? {
        let delivery = Delivery()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                delivery.install(continuation)
                DispatchQueue.global().async {
                    delivery.deliver(readLineBlocking(descriptor))
                }
            }
        } onCancel: {
            onCancel()
            delivery.deliver(nil)
        }
    }

    private static func readLineBlocking(_ descriptor: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Resumes the continuation once: with the line, or with nil if cancellation came first (or before it was
    /// installed).
    private final class Delivery: Sendable {
        private enum State {
            case waiting
            case installed(CheckedContinuation<String?, Never>)
            case done
        }

        private let state = Mutex<State>(.waiting)

        func install(_ continuation: CheckedContinuation<String?, Never>) {
            let resumeNow = state.withLock { state -> Bool in
                if case .done = state { return true }
                state = .installed(continuation)
                return false
            }
            if resumeNow { continuation.resume(returning: nil) }
        }

        func deliver(_ line: String?) {
            let continuation = state.withLock { state -> CheckedContinuation<String?, Never>? in
                defer { state = .done }
                if case .installed(let continuation) = state { return continuation }
                return nil
            }
            continuation?.resume(returning: line)
        }
    }
}
