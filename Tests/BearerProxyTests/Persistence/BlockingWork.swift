import Foundation

/// Runs blocking work (waiting for threads, child processes, pipes) on a thread of its own, off Swift's
/// cooperative pool, so a test that waits cannot starve the tests running beside it.
enum BlockingWork {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try body() })
            }
            thread.start()
        }
    }
}
