import Dispatch
import Testing

/// For a test that keeps a CPU busy for seconds without awaiting anything: a state machine's sweep, a differential
/// corpus, the schema agreement. Swift Testing runs every test on Swift's cooperative pool, which has one thread per
/// core — two on the CI machine — and a test that never suspends holds its thread until it ends. Two such tests at
/// once leave no thread for the rest of the suite: the proxies' token fetches and the test clients beside them wait,
/// and their time limits fire (a `command` token source's program seen to take 20 s, its spawn waiting for a
/// thread). With this trait each of its test cases runs on a thread of its own, and the pool stays free.
struct OwnThread: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's own scope holds no test code; its test cases each get a thread.
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(ThreadOfItsOwn()) { try await function() }
    }
}

extension Trait where Self == OwnThread {
    /// Runs each test case on a thread of its own, off the cooperative pool (``OwnThread``).
    static var ownThread: Self { OwnThread() }
}

/// A task executor with one thread: a serial queue of its own, which libdispatch serves from its overcommitting
/// pool — a thread that does not count against the cooperative pool's width.
final class ThreadOfItsOwn: TaskExecutor {
    private let queue = DispatchQueue(label: "bearer-proxy.tests.own-thread")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
