import NIOCore
import NIOHTTP1
import Testing

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

/// #23 item 7: docs/architecture.md's transition table of one exchange is the machine's own, found by trying every
/// event in every state reachable from the start of a POST to a route that sends a token and of a WebSocket
/// handshake (``TransitionTable``). The document leaves out, and says so, the illegal events (each moves to `closing`
/// and aborts, counted), the handshake's rows other than its 101 and tunnel, and the rows after a replay that the
/// replay does not change.
@Suite("The exchange's transition table in docs/architecture.md matches the code")
struct ExchangeDiagramTests {
    typealias Machine = ExchangeStateMachine
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func progress(_ progress: Machine.RequestProgress) -> String {
        progress == .ended ? "request ended" : "request streaming"
    }

    static func name(_ machine: Machine) -> String {
        let kind = machine.request.upgrade == .webSocket ? "WebSocket: " : ""
        let replayed = machine.replays.isEmpty ? "" : machine.stepUp != nil ? " (stepping up)" : " (replayed)"
        let state: String =
            switch machine.state {
            case .routing: "routing"
            case .local(let request): "local, \(progress(request))"
            case .awaitingLocalAnswer: "awaiting local answer"
            case .answered(let request): "answered, \(progress(request))"
            case .awaitingToken(let upload, _, _): "awaiting token, \(progress(upload.progress))"
            case .connecting(let upload, _): "connecting, \(progress(upload.progress))"
            case .streaming(let request, .awaitingHead): "streaming, \(progress(request)), awaiting head"
            case .streaming(let request, .streaming): "streaming, \(progress(request)), response streaming"
            case .discardingRejection(let rejection):
                if case .stepUp = rejection.retry {
                    "discarding a 403 for a step-up"
                } else {
                    "discarding a rejected answer"
                }
            case .tunnelling: "tunnelling"
            case .closing: "closing"
            case .finished: "finished"
            case .modifying: "modifying"
            }
        return kind + state + replayed
    }

    static func action(_ action: Machine.Action) -> String {
        func fate(_ release: Machine.Release) -> String { release == .park ? "pool the connection" : "close it" }
        func then(_ after: Machine.AfterResponse) -> String {
            switch after {
            case .finished(let close): close ? "finish, close" : "finish"
            case .awaitingRequestEnd: "await the request's end"
            }
        }
        func answer(_ answer: Machine.Answer) -> String {
            switch answer {
            case .problem: "the refusal"
            case .response: "the response"
            case .failure(let failure):
                switch failure {
                case .token: "503/502 (token)"
                case .tokenWaitTimedOut: "503 (token wait)"
                case .upstreamUnreachable: "502 (unreachable)"
                case .responseHeadTimedOut: "504"
                case .callDeadlinePassed: "504 (the call's deadline)"
                case .bodyStalled: "408"
                case .upstreamStoppedReading: "504 (upstream stopped reading)"
                case .upstreamClosed: "502 (closed)"
                case .unexpectedSwitch: "502 (unexpected 101)"
                case .responseWithoutHead: "502 (no head)"
                case .insufficientScope: "403 (step-up)"
                case .tokenRefused: "401 (refused token, discovered)"
                }
            }
        }
        return switch action {
        case .none: "—"
        case .forwardBody: "write the part upstream"
        case .consumeLocally: "hash the part"
        case .forwardEnd: "write the end upstream"
        case .answerLocally: "ask the local endpoint"
        case .fetchToken(_, let claims): claims == nil ? "fetch the token" : "fetch a token with the claims"
        case .connect: "get a connection"
        case .sendRequest(let body, let end):
            "send the head" + (body.isEmpty ? "" : ", held parts") + (end ? ", end" : "")
        case .parkConnection: "pool the late connection"
        case .forwardInformational: "relay the 1xx"
        case .sendContinue: "send 100 Continue"
        case .forwardResponseHead(_, let keepAlive): "write the head" + (keepAlive ? "" : " (close)")
        case .forwardRejection(_, let keepAlive, _): "write the kept rejection" + (keepAlive ? "" : " (close)")
        case .forwardResponseBody: "write the part to the client"
        case .finishResponse(_, let release, let after): "\(fate(release)); write the end; \(then(after))"
        case .replayWithNewToken(let release, _, _): "\(fate(release)); replay with a new token"
        case .answer(let what, let keepAlive, let closeUpstream, let after):
            (closeUpstream ? "close the upstream; " : "") + "answer \(answer(what))" + (keepAlive ? "" : " (close)")
                + "; \(then(after))"
        case .closeConnection(let closeUpstream): closeUpstream ? "close both" : "close the client's"
        case .switchProtocols: "101, become a tunnel"
        case .finish(let close): close ? "finish, close" : "finish"
        case .abandon(let closeUpstream, let ended):
            (closeUpstream ? "close the upstream; " : "") + (ended ? "log it" : "log the status sent, else 499")
        case .abort: "abort"
        }
    }

    static var events: [(String, (inout Machine) -> String)] {
        let now = start + .milliseconds(1)
        let part = ByteBuffer(string: "x")
        func ticket(_ machine: Machine) -> Machine.Ticket {
            switch machine.state {
            case .awaitingLocalAnswer(let ticket), .awaitingToken(_, let ticket, _), .connecting(_, let ticket): ticket
            default: Machine.Ticket(exchange: machine.serial, attempt: machine.attempt)
            }
        }
        func event(_ apply: @escaping (inout Machine) -> Machine.Action) -> (inout Machine) -> String {
            { machine in
                let before = machine.illegalEvents
                let result = action(apply(&machine))
                return machine.illegalEvents > before ? "\(result) (illegal: counted)" : result
            }
        }
        let head = { (status: HTTPResponseStatus) in
            UpstreamResponse(HTTPResponseHead(version: .http1_1, status: status))
        }
        let routeLimit = TimeAmount.seconds(30)
        return [
            ("route: local endpoint", event { $0.route(.local, now: now) }),
            (
                "route: upstream, token cached",
                event { $0.route(.upstream(sendsToken: true, needsToken: false, limit: routeLimit), now: now) }
            ),
            (
                "route: upstream, no token cached",
                event { $0.route(.upstream(sendsToken: true, needsToken: true, limit: routeLimit), now: now) }
            ),
            ("route: answered (preflight, starting)", event { $0.route(.answer(.problem(.starting)), now: now) }),
            ("route: refused", event { $0.route(.refuse(.noRoute(path: "/")), now: now) }),
            ("body part", event { $0.requestBody(part, now: now) }),
            ("request end", event { $0.requestEnd(now: now) }),
            ("local answer", event { $0.localAnswer(ticket($0), .problem(.starting)) }),
            ("token", event { $0.tokenArrived(ticket($0)) }),
            ("token failed", event { $0.tokenFailed(ticket($0), .signInRequired(reason: "r")) }),
            ("connection", event { $0.connected(ticket($0), now: now) }),
            ("connect failed", event { $0.connectFailed(ticket($0), .refused) }),
            ("100 head", event { $0.responseHead(head(.continue)) }),
            ("200 head", event { $0.responseHead(head(.ok)) }),
            ("200 head, framed by the close", event { $0.responseHead(head(.ok), endsWithConnection: true) }),
            ("401 invalid_token head", event { $0.responseHead(head(.unauthorized), retry: .refresh) }),
            (
                "401 invalid_token head (discovered)",
                event { $0.responseHead(head(.unauthorized), retry: .refresh, signsInItself: true) }
            ),
            ("403 insufficient_scope head (discovered)", event { $0.responseHead(head(.forbidden), stepUp: ["s"]) }),
            (
                "403 insufficient_scope head (discovered, \"stepUp\": \"auto\")",
                event { $0.responseHead(head(.forbidden), retry: .stepUp(["s"]), stepUp: ["s"]) }
            ),
            ("101 head", event { $0.responseHead(head(.switchingProtocols)) }),
            ("response body part", event { $0.responseBody(part) }),
            ("response end", event { $0.responseEnd(now: now) }),
            ("upstream closed, never processed", event { $0.upstreamClosed(neverProcessed: true) }),
            ("upstream closed", event { $0.upstreamClosed(neverProcessed: false) }),
            ("timer, all due", event { $0.deadlinesDue(now: start + .hours(1), readsWithheld: false) }),
            ("request unreadable", event { $0.readFailed(.headersTooLarge) }),
            ("client closed", event { $0.clientClosed() }),
        ]
    }

    @Test("the exchange's table")
    func exchange() throws {
        let starts = [
            Machine.Request(method: .PUT),
            Machine.Request(method: .GET, upgrade: .webSocket),
        ].map {
            Machine(serial: 1, request: $0, now: Self.start, bodyStall: .seconds(60), assertsOnIllegalEvents: false)
        }
        var table = TransitionTable(starts: starts, name: Self.name, events: Self.events)
        let rows = table.rows
        func unreplayed(_ state: String) -> String {
            state.replacingOccurrences(of: " (replayed)", with: "").replacingOccurrences(of: " (stepping up)", with: "")
        }
        table.omitted = { row in
            if row.action.hasSuffix("(illegal: counted)") { return true }
            // After a replay, only what the replay changes.
            var first = row
            first.from = unreplayed(row.from)
            first.to = unreplayed(row.to)
            if row.from.hasSuffix("(replayed)") || row.from.hasSuffix("(stepping up)"), rows.contains(first) {
                return true
            }
            // The handshake's rows that differ from a PUT's in more than the connection's close: its 101 and tunnel.
            return row.from.hasPrefix("WebSocket: ") && !(row.from + row.to).contains("tunnelling")
        }
        #expect(table.rows.contains { $0.action.hasSuffix("(illegal: counted)") && $0.to.contains("closing") })
        #expect(
            table.rows.allSatisfy { !$0.action.hasSuffix("(illegal: counted)") || $0.to.contains("closing") },
            "every illegal event moves to closing")
        try table.expectDocumented(as: "exchange-transitions")
    }
}
