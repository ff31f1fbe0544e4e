import Foundation
import NIOCore
import Synchronization

/// The shared, lock-guarded side of `FakeIdentityProvider`: knobs, refresh tokens, observations, held responses,
/// open connections and waiting tasks. Everything sits in one `FakeIdentityData` behind one `Mutex`; continuations
/// and held responses are resumed outside it.
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

    private let data: Mutex<FakeIdentityData>
    private let timerLoop: any EventLoop
    /// The grants' logic (used under the lock).
    let grants: FakeIdentityGrants

    init(configuration: FakeIdentityProvider.Configuration, timerLoop: any EventLoop) {
        self.data = Mutex(FakeIdentityData(configuration: configuration))
        self.timerLoop = timerLoop
        self.grants = FakeIdentityGrants(configuration: configuration)
    }

    /// Reads under the lock.
    func read<T: Sendable>(_ body: (FakeIdentityData) -> T) -> T {
        self.data.withLock { body($0) }
    }

    /// Applies `body` under the lock, then resumes the waiters whose condition now holds.
    @discardableResult
    func mutate<T: Sendable>(_ body: (inout FakeIdentityData) -> T) -> T {
        let (result, ready) = self.data.withLock { data -> (T, [FakeIdentityData.Waiter]) in
            let result = body(&data)
            var ready: [FakeIdentityData.Waiter] = []
            for (id, waiter) in data.waiters where waiter.condition.isMet(by: data) {
                ready.append(waiter)
                data.waiters[id] = nil
            }
            return (result, ready)
        }
        for waiter in ready {
            waiter.continuation.resume()
        }
        return result
    }

    // MARK: - Requests

    /// Counts a discovery request; returns the discovery failure to play, if one is set.
    func discoveryRequested(path: String) -> FakeIdentityProvider.Failure? {
        self.mutate { data in
            data.discoveryRequests.append(path)
            return data.discoveryFailure
        }
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
            var delay: Duration?
            let reply: FakeIdentityReply
            switch failure {
            case .hang?:
                record.outcome = .hung
                reply = .hang
            case .dropConnection?:
                record.outcome = .dropped
                reply = .drop
            case .raw(let status, let headers, let body)?:
                record.outcome = .raw(status: status)
                reply = .respond(.raw(status: status, headers: headers, body: body), delay: nil, holdable: true)
            case .error?, .throttle?, .unavailable?, .unavailableRetryAfter?:
                let error = failure!.entraError!
                record.outcome = .rejected(error: error.error, codes: error.codes, status: error.status)
                reply = .respond(
                    error.response(baseURL: baseURL, correlationID: request.correlationID, now: now), delay: nil,
                    holdable: true)
            case .delay(let duration)?:
                delay = duration
                fallthrough
            case nil:
                switch self.grants.answer(request, verdict: verdict, record: &record, data: &data, now: now) {
                case .success(let body):
                    record.outcome = .issued
                    native?.settle(.success(body))
                    var headers: [(String, String)] = [("x-ms-request-id", UUID().uuidString.lowercased())]
                    if let correlationID = request.correlationID {
                        headers.append(("client-request-id", correlationID))
                    }
                    reply = .respond(.json(body, headers: headers), delay: delay, holdable: true)
                case .failure(let error):
                    record.outcome = .rejected(error: error.error, codes: error.codes, status: error.status)
                    native?.settle(.failure(error))
                    reply = .respond(
                        error.response(baseURL: baseURL, correlationID: request.correlationID, now: now),
                        delay: delay, holdable: true)
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
            guard data.holding, !data.isShutDown else { return false }
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

    // MARK: - Connections

    /// Registers an accepted connection; returns its id, or nil once shut down (the caller closes it).
    func connectionOpened(_ channel: any Channel) -> Int? {
        self.data.withLock { data -> Int? in
            if data.isShutDown { return nil }
            data.nextConnectionID += 1
            data.openChannels[data.nextConnectionID] = channel
            return data.nextConnectionID
        }
    }

    func connectionClosed(_ id: Int) {
        _ = self.data.withLock { $0.openChannels.removeValue(forKey: id) }
    }

    // MARK: - Waiting and shutdown

    /// Waits until `condition` holds; throws `TestSupportError.timedOut` after `timeout`, `CancellationError` if
    /// the task is cancelled, `TestSupportError.shutDown` if the provider shuts down first.
    func wait(for condition: Condition, timeout: Duration) async throws {
        let id = self.data.withLock { data -> Int in
            data.nextWaiterID += 1
            return data.nextWaiterID
        }
        let timer = self.timerLoop.scheduleTask(in: TimeAmount(timeout)) {
            self.fail(id, with: TestSupportError.timedOut("waiting for \(condition)", after: timeout))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = self.data.withLock { data in
                    if condition.isMet(by: data) { return .success(()) }
                    if data.isShutDown { return .failure(TestSupportError.shutDown) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    data.waiters[id] = FakeIdentityData.Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                }
            }
        } onCancel: {
            self.fail(id, with: CancellationError())
        }
    }

    /// Marks the state shut down, drops held responses, fails every waiter and returns the open channels.
    func shutDown() -> [any Channel] {
        let (waiters, channels) = self.data.withLock { data in
            data.isShutDown = true
            data.holding = false
            data.held = []
            let waiters = Array(data.waiters.values)
            data.waiters = [:]
            return (waiters, Array(data.openChannels.values))
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: TestSupportError.shutDown)
        }
        return channels
    }

    private func fail(_ id: Int, with error: any Error) {
        let found = self.data.withLock { data -> (FakeIdentityData.Waiter, any Error)? in
            guard let waiter = data.waiters.removeValue(forKey: id) else { return nil }
            if let error = error as? TestSupportError, case .timedOut(let what, let after) = error {
                let observed =
                    "token requests \(data.tokenRequests.count), discovery \(data.discoveryRequests.count), held \(data.held.count)"
                return (waiter, TestSupportError.timedOut("\(what) (observed: \(observed))", after: after))
            }
            return (waiter, error)
        }
        if let (waiter, error) = found {
            waiter.continuation.resume(throwing: error)
        }
    }
}
