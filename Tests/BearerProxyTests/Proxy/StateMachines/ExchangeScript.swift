import NIOCore
import NIOHTTP1

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Drives one ``ExchangeStateMachine`` through events at a chosen time, for the pure transition tests.
struct ExchangeScript {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let bodyStall = TimeAmount.seconds(60)
    static let routeLimit = TimeAmount.seconds(30)

    var machine: ExchangeStateMachine
    var now = Self.start
    /// The last response head fed to the machine.
    var lastHead: UpstreamResponse?

    init(_ request: ExchangeStateMachine.Request = .init(method: .GET), serial: UInt64 = 1) {
        machine = ExchangeStateMachine(serial: serial, request: request, now: Self.start, bodyStall: Self.bodyStall)
    }

    /// A request routed to an upstream with a cached token (or none needed): returns the connect ticket.
    @discardableResult
    mutating func proxied(sendsToken: Bool = true, needsToken: Bool = false) -> ExchangeStateMachine.Action {
        machine.route(.upstream(sendsToken: sendsToken, needsToken: needsToken, limit: Self.routeLimit), now: now)
    }

    /// A response head with `status`, keeping the connection unless `keepAlive` is false.
    static func responseHead(_ status: HTTPResponseStatus, keepAlive: Bool = true) -> UpstreamResponse {
        UpstreamResponse(
            HTTPResponseHead(version: .http1_1, status: status, headers: keepAlive ? [:] : ["connection": "close"]))
    }

    /// The action that forwards the last head fed.
    func forwarded(keepAlive: Bool) -> ExchangeStateMachine.Action {
        .forwardResponseHead(lastHead!, keepAlive: keepAlive)
    }

    static func finish(
        _ release: ExchangeStateMachine.Release, then: ExchangeStateMachine.AfterResponse
    ) -> ExchangeStateMachine.Action {
        .finishResponse(trailers: nil, release: release, then: then)
    }

    mutating func body(_ text: String) -> ExchangeStateMachine.Action {
        machine.requestBody(ByteBuffer(string: text), now: now)
    }

    mutating func end() -> ExchangeStateMachine.Action { machine.requestEnd(now: now) }

    mutating func connected(_ ticket: ExchangeStateMachine.Ticket) -> ExchangeStateMachine.Action {
        machine.connected(ticket, now: now)
    }

    mutating func head(
        _ status: HTTPResponseStatus, keepAlive: Bool = true, retry: ExchangeStateMachine.TokenRetry? = nil,
        endsWithConnection: Bool = false, stepUp: [String]? = nil, signsInItself: Bool = false
    ) -> ExchangeStateMachine.Action {
        let head = Self.responseHead(status, keepAlive: keepAlive)
        lastHead = head
        return machine.responseHead(
            head, endsWithConnection: endsWithConnection, retry: retry, stepUp: stepUp, signsInItself: signsInItself)
    }

    mutating func responseEnd() -> ExchangeStateMachine.Action { machine.responseEnd(now: now) }

    mutating func advance(_ amount: TimeAmount) { now = now + amount }

    mutating func timer(readsWithheld: Bool = false) -> ExchangeStateMachine.Action {
        machine.deadlinesDue(now: now, readsWithheld: readsWithheld)
    }

    /// The ticket of the step the last action started.
    static func ticket(of action: ExchangeStateMachine.Action) -> ExchangeStateMachine.Ticket? {
        switch action {
        case .connect(let ticket), .fetchToken(let ticket, _), .answerLocally(let ticket),
            .replayWithNewToken(_, _, let ticket):
            ticket
        default:
            nil
        }
    }

    var stateName: String {
        switch machine.state {
        case .routing: "routing"
        case .local: "local"
        case .awaitingLocalAnswer: "awaitingLocalAnswer"
        case .answered: "answered"
        case .awaitingToken: "awaitingToken"
        case .connecting: "connecting"
        case .streaming(.ended, .awaitingHead): "streaming(ended, awaitingHead)"
        case .streaming(.streaming, .awaitingHead): "streaming(streaming, awaitingHead)"
        case .streaming(.ended, .streaming): "streaming(ended, streaming)"
        case .streaming(.streaming, .streaming): "streaming(streaming, streaming)"
        case .discardingRejection: "discardingRejection"
        case .tunnelling: "tunnelling"
        case .closing: "closing"
        case .finished: "finished"
        case .modifying: "modifying"
        }
    }
}
