import Foundation
import NIOCore
import Synchronization

/// The shared, lock-guarded side of `FakeFirebase`: knobs, accounts, sign-in sessions, observations, open
/// connections and waiting tasks — one `FakeFirebaseData` in a ``WatchedState``.
final class FakeFirebaseState: Sendable {
    /// What a waiter waits for.
    enum Condition: Sendable, CustomStringConvertible {
        /// At least this many requests to the endpoint have been recorded.
        case requests(FakeFirebase.Endpoint, Int)

        func isMet(by data: FakeFirebaseData) -> Bool {
            switch self {
            case .requests(let endpoint, let n): return data.requests.count(where: { $0.endpoint == endpoint }) >= n
            }
        }

        var description: String {
            switch self {
            case .requests(let endpoint, let n): return "\(n) \(endpoint) request(s)"
            }
        }
    }

    private let data: WatchedState<FakeFirebaseData>
    /// The endpoints' logic (used under the lock).
    let operations: FakeFirebaseOperations

    init(configuration: FakeFirebase.Configuration, timerLoop: any EventLoop) {
        self.data = WatchedState(
            FakeFirebaseData(configuration: configuration), timerLoop: timerLoop, summary: FakeFirebaseState.summary)
        self.operations = FakeFirebaseOperations(configuration: configuration)
    }

    /// Reads under the lock.
    func read<T: Sendable>(_ body: (FakeFirebaseData) -> T) -> T {
        self.data.read(body)
    }

    /// Applies `body` under the lock, then resumes the waiters whose condition now holds.
    @discardableResult
    func mutate<T: Sendable>(_ body: (inout FakeFirebaseData) -> T) -> T {
        self.data.mutate(body)
    }

    /// What a timed-out wait reports as observed.
    @Sendable static func summary(_ data: FakeFirebaseData) -> String {
        FakeFirebase.Endpoint.allCases.map { endpoint in
            "\(endpoint) \(data.requests.count(where: { $0.endpoint == endpoint }))"
        }.joined(separator: ", ")
    }

    // MARK: - Connections

    /// Registers an accepted connection; returns its id, or nil once shut down (the caller closes it).
    func connectionOpened(_ channel: any Channel) -> Int? {
        self.data.connectionOpened(channel)
    }

    func connectionClosed(_ id: Int) {
        self.data.connectionClosed(id)
    }

    // MARK: - Waiting and shutdown

    /// Waits until `condition` holds; throws `TestSupportError.timedOut` after `timeout`, `CancellationError` if
    /// the task is cancelled, `TestSupportError.shutDown` if the fake shuts down first.
    func wait(for condition: Condition, timeout: Duration) async throws {
        try await self.data.wait(for: "\(condition)", timeout: timeout) { condition.isMet(by: $0) }
    }

    /// Marks the state shut down, fails every waiter and returns the open channels.
    func shutDown() -> [any Channel] {
        self.data.shutDown()
    }
}
