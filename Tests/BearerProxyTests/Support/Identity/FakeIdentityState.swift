import Foundation
import NIOCore
import Synchronization

/// The shared, lock-guarded side of `FakeIdentityProvider`: knobs, refresh tokens, observations, held responses,
/// open connections and waiting tasks — one `FakeIdentityData` in a ``WatchedState``; held responses are delivered
/// outside the lock.
final class FakeIdentityState: Sendable {
    /// What a waiter waits for.
    enum Condition: Sendable, CustomStringConvertible {
        case tokenRequests(Int)
        case discoveryRequests(Int)
        case heldResponses(Int)
        case nativeRequests(Int)
        case deviceCodeRequests(Int)
        case devicePolls(Int)
        case authorizeRequests(Int)

        func isMet(by data: FakeIdentityData) -> Bool {
            switch self {
            case .tokenRequests(let n): return data.tokenRequests.count >= n
            case .discoveryRequests(let n): return data.discoveryRequests.count >= n
            case .heldResponses(let n): return data.held.count >= n
            case .nativeRequests(let n): return data.nativeRequests.count >= n
            case .deviceCodeRequests(let n): return data.deviceCodeRequests.count >= n
            case .devicePolls(let n): return data.devicePollCount >= n
            case .authorizeRequests(let n): return data.authorizeRequests.count >= n
            }
        }

        var description: String {
            switch self {
            case .tokenRequests(let n): return "\(n) token request(s)"
            case .discoveryRequests(let n): return "\(n) discovery request(s)"
            case .heldResponses(let n): return "\(n) held token response(s)"
            case .nativeRequests(let n): return "\(n) native authentication request(s)"
            case .deviceCodeRequests(let n): return "\(n) device authorization request(s)"
            case .devicePolls(let n): return "\(n) device code poll(s)"
            case .authorizeRequests(let n): return "\(n) authorization request(s)"
            }
        }
    }

    private let data: WatchedState<FakeIdentityData>
    /// The grants' logic (used under the lock).
    let grants: FakeIdentityGrants

    init(configuration: FakeIdentityProvider.Configuration, timerLoop: any EventLoop) {
        self.data = WatchedState(
            FakeIdentityData(configuration: configuration), timerLoop: timerLoop, summary: FakeIdentityState.summary)
        self.grants = FakeIdentityGrants(configuration: configuration)
    }

    /// Reads under the lock.
    func read<T: Sendable>(_ body: (FakeIdentityData) -> T) -> T {
        self.data.read(body)
    }

    /// Applies `body` under the lock, then resumes the waiters whose condition now holds.
    @discardableResult
    func mutate<T: Sendable>(_ body: (inout FakeIdentityData) -> T) -> T {
        self.data.mutate(body)
    }

    // MARK: - Requests

    /// Counts a discovery request.
    func discoveryRequested(path: String) {
        self.mutate { $0.discoveryRequests.append(path) }
    }

    /// Records a token request and decides its reply: an injected failure, or the grant's answer.
    func tokenRequested(
        _ request: FakeIdentityTokenRequest, verdict: FakeIdentityAssertionVerifier.Verdict?, baseURL: String
    ) -> FakeIdentityReply {
        let now = Date()
        let grantType = request.parameters["grant_type"] ?? ""
        return self.mutate { data -> FakeIdentityReply in
            var record = request.record(sequence: data.tokenRequests.count + 1)
            var native =
                FakeIdentityGrants.nativeGrantTypes.contains(grantType)
                ? RecordedNativeRequest(
                    sequence: data.nativeRequests.count + 1, endpoint: .token, parameters: request.parameters)
                : nil
            if grantType == FakeIdentityGrants.deviceCodeGrantType { data.devicePollCount += 1 }
            if let decoded = verdict?.decoded { data.lastAssertion = decoded }
            let failure = data.takeFailure(for: request.scopes)
            record.injected = failure?.label
            if let failure { native?.settle(injected: failure) }
            let reply: FakeIdentityReply
            switch failure {
            case .raw(let status, let headers, let body)?:
                record.outcome = .raw(status: status)
                reply = .respond(.raw(status: status, headers: headers, body: body), holdable: true)
            case .error?, .throttle?, .unavailable?, .unavailableRetryAfter?:
                let error = failure!.entraError!
                record.outcome = .rejected(error: error.error, codes: error.codes, status: error.status)
                reply = .respond(
                    error.response(baseURL: baseURL, correlationID: request.correlationID, now: now), holdable: true)
            case nil:
                switch self.grants.answer(request, verdict: verdict, record: &record, data: &data, now: now) {
                case .success(let body):
                    record.outcome = .issued
                    native?.settle(.success(body))
                    var headers: [(String, String)] = [("x-ms-request-id", UUID().uuidString.lowercased())]
                    if let correlationID = request.correlationID {
                        headers.append(("client-request-id", correlationID))
                    }
                    reply = .respond(.json(body, headers: headers), holdable: true)
                case .failure(let error):
                    record.outcome = .rejected(error: error.error, codes: error.codes, status: error.status)
                    native?.settle(.failure(error))
                    reply = .respond(
                        error.response(baseURL: baseURL, correlationID: request.correlationID, now: now),
                        holdable: true)
                }
            }
            if let native { data.nativeRequests.append(native) }
            data.tokenRequests.append(record)
            return reply
        }
    }

    // MARK: - Latch

    /// While the latch is on, keeps `deliver` to run at release and returns true; otherwise returns false (the
    /// caller delivers at once).
    func holdIfLatched(_ deliver: @escaping @Sendable () -> Void) -> Bool {
        self.mutate { data in
            guard data.holding else { return false }  // shutting down turns the latch off
            data.held.append(deliver)
            return true
        }
    }

    /// Turns the latch off and delivers every held response, in arrival order.
    func release() {
        let held = self.mutate { data in
            data.holding = false
            defer { data.held = [] }
            return data.held
        }
        for deliver in held {
            deliver()
        }
    }

    /// What a timed-out wait reports as observed.
    @Sendable static func summary(_ data: FakeIdentityData) -> String {
        "token requests \(data.tokenRequests.count), discovery \(data.discoveryRequests.count), held \(data.held.count)"
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

    /// Marks the state shut down, drops held responses, fails every waiter and returns the open channels.
    func shutDown() -> [any Channel] {
        self.data.shutDown { data in
            data.holding = false
            data.held = []
        }
    }
}
