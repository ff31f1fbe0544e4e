import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// The life of one exchange on a client connection, as a value: the handler feeds it events (a routing decision, a
/// request part, a token or its failure, an upstream connection or its failure, a response part, a deadline) and
/// runs the ``Action`` each returns — every event returns one, and a failure's action is already its final outcome
/// (what the client gets, what becomes of the upstream connection). No I/O, no references to channels — so every
/// transition is tested purely (`ExchangeStateMachineTests`, `ExchangeSweepTests`), and no later step can re-read
/// a fact an earlier one fixed: the facts live in the state's cases.
///
/// Every event that changes the state is in this file: that is what lets ``state`` be `private(set)`. An event
/// that cannot happen in the state it arrives in is a bug in the caller; it moves the machine to `closing` and
/// returns ``Action/abort`` (counted, and asserted in debug builds) — never a silent hang.
///
/// `docs/architecture.md` has the diagram and the full table.
struct ExchangeStateMachine {
    /// Bodies up to this size are kept for a replay; larger ones are streamed only.
    static let replayLimit = 64 * 1024

    let serial: UInt64
    package let request: Request
    package let bodyStall: TimeAmount
    /// When the client's own deadline for the call passes (``Request/callLimit``), if it set one.
    let callDue: NIODeadline?
    package private(set) var state: State
    package private(set) var persistence: Persistence
    private(set) var expectation: Expectation
    private(set) var kept = KeptBody.notNeeded
    private(set) var replays: Replays = []
    /// The scopes of the step-up the one replay waits for (SPEC §6.3): if its token does not come, the answer is the
    /// step-up problem, as it would have been without the opt-in.
    package private(set) var stepUp: [String]?
    /// A request body byte went upstream (or is on its way): a failed request is then never sent again.
    private(set) var bodySent = false
    /// The route's limit for the token and for the response head (known once routed).
    private(set) var routeLimit = TimeAmount.seconds(30)
    private(set) var attempt: UInt32 = 0
    /// Events that could not happen in the state they arrived in.
    private(set) var illegalEvents = 0
    /// Whether an illegal event also stops a debug build (the product); the sweep tests feed illegal events on
    /// purpose and count them instead.
    private let assertsOnIllegalEvents: Bool

    init(
        serial: UInt64, request: Request, now: NIODeadline, bodyStall: TimeAmount, assertsOnIllegalEvents: Bool = true
    ) {
        self.serial = serial
        self.request = request
        self.bodyStall = bodyStall
        self.callDue = request.callLimit.map { now + $0 }
        self.assertsOnIllegalEvents = assertsOnIllegalEvents
        self.state = .routing(.streaming(bodyDue: now + bodyStall))
        // NIO's parser reads nothing after an upgrade request: the connection becomes a tunnel or closes.
        self.persistence = request.keepAlive && request.upgrade == .none ? .keepAlive : .close
        self.expectation = request.expectsContinue ? .awaitingContinue : .none
    }

    private mutating func nextTicket() -> Ticket {
        attempt += 1
        return Ticket(exchange: serial, attempt: attempt)
    }

    private mutating func illegal(_ event: StaticString) -> Action {
        illegalEvents += 1
        if assertsOnIllegalEvents { assertionFailure("exchange: \(event) cannot happen in \(state)") }
        state = .closing
        return .abort
    }

    // MARK: Routing

    /// The handler decided what answers the request (one synchronous step after its head).
    package mutating func route(_ routing: Routing, now: NIODeadline) -> Action {
        guard case .routing(let progress) = state else { return illegal("route") }
        switch routing {
        case .local:
            state = .local(progress)
            return .none
        case .upstream(let sendsToken, let needsToken, let limit):
            routeLimit = limit
            kept = sendsToken ? .kept([], bytes: 0) : .notNeeded
            let ticket = nextTicket()
            if needsToken {
                state = .awaitingToken(Upload(progress: progress), ticket, due: now + limit)
                return .fetchToken(ticket, claims: nil)
            }
            state = .connecting(Upload(progress: progress), ticket)
            return .connect(ticket)
        case .answer(let answer):
            return self.answer(answer)
        case .refuse(let problem):
            stopReading()
            return answer(.problem(problem))
        }
    }

    // MARK: Request parts

    /// A part of the request body arrived.
    mutating func requestBody(_ buffer: ByteBuffer, now: NIODeadline) -> Action {
        let due = RequestProgress.streaming(bodyDue: now + bodyStall)
        switch state {
        case .local(.streaming):
            state = .local(due)
            return .consumeLocally(buffer)
        case .answered(.streaming):
            state = .answered(due)
            return .none
        case .awaitingToken(var upload, let ticket, let tokenDue) where upload.progress != .ended:
            state = .modifying
            upload.progress = due
            upload.pending.append(buffer)
            state = .awaitingToken(upload, ticket, due: tokenDue)
            keep(buffer)
            return .none
        case .connecting(var upload, let ticket) where upload.progress != .ended:
            state = .modifying
            upload.progress = due
            upload.pending.append(buffer)
            state = .connecting(upload, ticket)
            keep(buffer)
            return .none
        case .streaming(.streaming, let response):
            state = .streaming(due, response)
            keep(buffer)
            return .forwardBody(buffer)
        case .tunnelling, .closing, .finished:
            // The connection is going; what its parser still delivers is dropped.
            return .none
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .streaming,
            .discardingRejection, .modifying:
            // Routing is synchronous, and no body part follows the request's end.
            return illegal("a request body part")
        }
    }

    private mutating func keep(_ buffer: ByteBuffer) {
        bodySent = true
        guard case .kept(var buffers, let bytes) = kept else { return }
        let total = bytes + buffer.readableBytes
        if total > Self.replayLimit {
            kept = .tooLarge
            return
        }
        kept = .notNeeded  // let go of the array, so appending does not copy it
        buffers.append(buffer)
        kept = .kept(buffers, bytes: total)
    }

    /// The request's `end` arrived (its trailers are dropped: SPEC §8).
    mutating func requestEnd(now: NIODeadline) -> Action {
        switch state {
        case .local(.streaming):
            let ticket = nextTicket()
            state = .awaitingLocalAnswer(ticket)
            return .answerLocally(ticket)
        case .answered(.streaming):
            state = .finished
            return .finish(close: persistence == .close)
        case .awaitingToken(var upload, let ticket, let due) where upload.progress != .ended:
            upload.progress = .ended
            state = .awaitingToken(upload, ticket, due: due)
            return .none
        case .connecting(var upload, let ticket) where upload.progress != .ended:
            upload.progress = .ended
            state = .connecting(upload, ticket)
            return .none
        case .streaming(.streaming, .awaitingHead):
            state = .streaming(.ended, .awaitingHead(due: now + routeLimit))
            return .forwardEnd
        case .streaming(.streaming, let response):
            state = .streaming(.ended, response)
            return .forwardEnd
        case .tunnelling, .closing, .finished:
            return .none
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .streaming,
            .discardingRejection, .modifying:
            return illegal("the request's end")
        }
    }

    /// The request could not be read (a malformed message): it is answered as if it had ended, and the connection
    /// closes after it; nothing more is read from this client.
    mutating func readFailed(_ problem: ProxyError) -> Action {
        stopReading()
        return answer(.problem(problem))
    }

    private mutating func stopReading() {
        persistence = .close
        state.setRequestProgress(.ended)
    }

    /// The server is shutting down gracefully: this exchange is finished, then the connection closes.
    mutating func quiesce() -> Action {
        persistence = .close
        return .none
    }

    // MARK: The proxy's own answers

    /// The local endpoint's answer for `ticket` is known.
    mutating func localAnswer(_ ticket: Ticket, _ answer: Answer) -> Action {
        guard case .awaitingLocalAnswer(let current) = state, current == ticket else { return .none }
        return self.answer(answer)
    }

    /// The proxy answers by itself (SPEC §8). Once a response is underway that is impossible: the connection closes
    /// instead.
    private mutating func answer(_ answer: Answer) -> Action {
        let progress: RequestProgress
        var closeUpstream = false
        switch state {
        case .routing(let current), .local(let current):
            progress = current
        case .awaitingLocalAnswer:
            progress = .ended
        case .awaitingToken(let upload, _, _), .connecting(let upload, _):
            progress = upload.progress
        case .streaming(let current, .awaitingHead):
            progress = current
            closeUpstream = true
        case .discardingRejection:
            progress = .ended
            closeUpstream = true
        case .streaming(_, .streaming):
            state = .closing
            return .closeConnection(closeUpstream: true)
        case .answered, .closing:
            state = .closing
            return .closeConnection(closeUpstream: false)
        case .tunnelling, .finished, .modifying:
            return .none
        }
        if progress != .ended && expectation == .awaitingContinue {
            // RFC 9110 §10.1.1: the client, told no `100`, may never send the body it announced. The connection
            // cannot be reused, and nothing is left to wait for: it closes once this answer is written.
            persistence = .close
            state = .finished
            return .answer(answer, keepAlive: false, closeUpstream: closeUpstream, then: .finished(close: true))
        }
        if progress == .ended {
            state = .finished
            return .answer(
                answer, keepAlive: persistence == .keepAlive, closeUpstream: closeUpstream,
                then: .finished(close: persistence == .close))
        }
        state = .answered(progress)
        return .answer(
            answer, keepAlive: persistence == .keepAlive, closeUpstream: closeUpstream, then: .awaitingRequestEnd)
    }

    private mutating func fail(_ failure: Failure) -> Action {
        answer(.failure(failure))
    }

    /// The client connection closed: whatever the exchange was doing is abandoned.
    mutating func clientClosed() -> Action {
        let action: Action
        switch state {
        case .streaming, .discardingRejection: action = .abandon(closeUpstream: true, responseEnded: false)
        case .answered, .finished, .tunnelling: action = .abandon(closeUpstream: false, responseEnded: true)
        default: action = .abandon(closeUpstream: false, responseEnded: false)
        }
        state = .finished
        return action
    }

    // MARK: Token and connection

    /// The token for `ticket` is known: get a connection.
    mutating func tokenArrived(_ ticket: Ticket) -> Action {
        guard case .awaitingToken(let upload, let current, _) = state, current == ticket else { return .none }
        state = .connecting(upload, ticket)
        return .connect(ticket)
    }

    /// The token for `ticket` could not be had.
    mutating func tokenFailed(_ ticket: Ticket, _ error: TokenError) -> Action {
        guard case .awaitingToken(_, let current, _) = state, current == ticket else { return .none }
        if let stepUp { return fail(.insufficientScope(scopes: stepUp, note: error.reason)) }
        return fail(.token(error))
    }

    /// The connection for `ticket` is ready: send the request, and what arrived of its body meanwhile.
    mutating func connected(_ ticket: Ticket, now: NIODeadline) -> Action {
        guard case .connecting(let upload, let current) = state, current == ticket else { return .parkConnection }
        let ended = upload.progress == .ended
        state = .streaming(upload.progress, .awaitingHead(due: ended ? now + routeLimit : nil))
        return .sendRequest(body: upload.pending, end: ended)
    }

    /// No connection could be made for `ticket`.
    mutating func connectFailed(_ ticket: Ticket, _ failure: ConnectionFailure) -> Action {
        guard case .connecting(_, let current) = state, current == ticket else { return .none }
        return fail(.upstreamUnreachable(failure))
    }

    // MARK: Response parts

    /// A response head arrived. `endsWithConnection` when its body, as forwarded, ends only when the connection
    /// closes (``Forwarding/responseFraming(upstream:request:)``, RFC 9112 §6.3 rule 8: an HTTP/1.0 client and no
    /// length): the client's connection closes after it too. `retry` is what its challenge asks for, when it is a
    /// `401` that one replay with another token could fix (``BearerChallenge``), or a step-up `serve` may sign in
    /// for (`"stepUp": "auto"`); `stepUp` the scopes a discovered route's `403` `insufficient_scope` asks a sign-in
    /// for (then the proxy answers — or replays once, as for a `401` — and the upstream's connection, its answer
    /// unread, closes). `signsInItself` when the route signs in at its upstream's own authorization server (a
    /// discovered route, SPEC §6.3) and this `401` carries a `Bearer` challenge: one the proxy does not replay is
    /// answered with the proxy's own problem, never passed on — a local client that saw the upstream's challenge (its
    /// `resource_metadata`, RFC 9728 §5.1) would start an OAuth of its own.
    /// The upstream's response head, with what it says of the token (``TokenVerdict``).
    mutating func responseHead(
        _ head: UpstreamResponse, endsWithConnection: Bool, verdict: TokenVerdict
    ) -> Action {
        responseHead(
            head, endsWithConnection: endsWithConnection, retry: verdict.retry, stepUp: verdict.stepUp,
            signsInItself: verdict.signsInItself)
    }

    mutating func responseHead(
        _ head: UpstreamResponse, endsWithConnection: Bool = false, retry: TokenRetry? = nil,
        stepUp: [String]? = nil, signsInItself: Bool = false
    ) -> Action {
        guard case .streaming(let progress, .awaitingHead(let headDue)) = state else {
            return illegal("a response head")
        }
        let status = head.status
        if status == .switchingProtocols {
            // Only a WebSocket handshake asked to switch; to anything else a 101 is a protocol violation.
            guard request.upgrade == .webSocket, progress == .ended else { return fail(.unexpectedSwitch) }
            state = .tunnelling
            return .switchProtocols(head)
        }
        if status.code / 100 == 1 {
            guard request.forwardsInformational else { return .none }
            if status == .continue && expectation == .awaitingContinue { expectation = .continued }
            return .forwardInformational(status)
        }
        if let retry, status == retry.fixes, !replays.contains(.newToken), progress == .ended, case .kept = kept {
            // This answer is read and dropped; the request goes again with a new token once it has ended.
            state = .discardingRejection(
                Rejection(
                    retry: retry, due: headDue, head: head, endsWithConnection: endsWithConnection, stepUp: stepUp,
                    signsInItself: signsInItself))
            return .none
        }
        return passOn(
            head, progress: progress, stepUp: stepUp, signsInItself: signsInItself,
            endsWithConnection: endsWithConnection, why: .retry(retry))
    }

    /// Why a final head is not replayed, as a step-up's or a discovered route's problem says it.
    private enum NotReplayed {
        /// What its challenge asked for (``stepUpNote(_:)``, ``refusalNote(_:requestEnded:)`` word it).
        case retry(TokenRetry?)
        /// Its end could not be waited for.
        case reason(String)
    }

    /// A final head that is not replayed (`why`): a step-up's `403` or a discovered route's `401` is answered by the
    /// proxy, any other goes to the client.
    private mutating func passOn(
        _ head: UpstreamResponse, progress: RequestProgress, stepUp: [String]?, signsInItself: Bool,
        endsWithConnection: Bool, why: NotReplayed
    ) -> Action {
        if let stepUp, head.status == .forbidden {
            let note: String? =
                switch why {
                case .retry(let retry): stepUpNote(retry)
                case .reason(let reason): reason
                }
            return fail(.insufficientScope(scopes: stepUp, note: note))
        }
        if signsInItself, head.status == .unauthorized {
            let note =
                switch why {
                case .retry(let retry): refusalNote(retry, requestEnded: progress == .ended)
                case .reason(let reason): reason
                }
            return fail(.tokenRefused(note: note))
        }
        if progress != .ended && expectation == .awaitingContinue {
            persistence = .close  // see `answer(_:)`: the announced body may never come
        }
        if endsWithConnection { persistence = .close }
        state = .streaming(progress, .streaming(upstreamKeepAlive: head.keepAlive))
        return .forwardResponseHead(head, keepAlive: persistence == .keepAlive)
    }

    /// A rejected answer whose end cannot be waited for (`reason`) is handled as one that cannot be replayed
    /// (``passOn(_:progress:stepUp:signsInItself:endsWithConnection:why:)``): a step-up's or a
    /// discovered route's is answered by the proxy (its connection closed, the rest unread), any other goes to the
    /// client as it came, with what was read of its body.
    private mutating func cannotReplay(_ rejection: Rejection, because reason: String) -> Action {
        state = .discardingRejection(rejection)
        let action = passOn(
            rejection.head, progress: .ended, stepUp: rejection.stepUp, signsInItself: rejection.signsInItself,
            endsWithConnection: rejection.endsWithConnection, why: .reason(reason))
        guard case .forwardResponseHead(let head, let keepAlive) = action else { return action }
        return .forwardRejection(head, keepAlive: keepAlive, body: rejection.body)
    }

    /// Why a step-up `serve` could sign in for (`retry`) is answered with the problem after all; nil when it could
    /// not (the route does not opt in).
    private func stepUpNote(_ retry: TokenRetry?) -> String? {
        guard case .stepUp = retry else { return nil }
        if stepUp != nil { return "the upstream refused the token of its sign-in for them too" }
        if replays.contains(.newToken) { return "this request was sent again once already" }
        return "this request cannot be sent again (only one whose whole body, at most 64 KiB, has arrived)"
    }

    /// Why a discovered route's `401` is answered rather than replayed, as a clause of the problem's detail.
    private func refusalNote(_ retry: TokenRetry?, requestEnded: Bool) -> String {
        if replays.contains(.newToken) { return "refused the new token it was sent again with too" }
        guard retry != nil else { return "said nothing a new token would fix" }
        guard requestEnded, case .kept = kept else {
            return "this request cannot be sent again (only one whose whole body, at most 64 KiB, has arrived)"
        }
        return "this request cannot be sent again"
    }

    /// A part of the response body arrived.
    mutating func responseBody(_ buffer: ByteBuffer) -> Action {
        switch state {
        case .streaming(_, .streaming):
            return .forwardResponseBody(buffer)
        case .discardingRejection(var rejection):
            state = .modifying
            rejection.body.append(buffer)
            rejection.bytes += buffer.readableBytes
            guard rejection.bytes <= Self.replayLimit else {
                return cannotReplay(rejection, because: "its answer was too large to read before sending it again")
            }
            state = .discardingRejection(rejection)
            return .none
        case .tunnelling, .closing, .finished:
            // What arrives while the connections are being let go is dropped.
            return .none
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .streaming, .modifying:
            return illegal("a response body part")
        }
    }

    /// The response's `end` arrived, with these trailers.
    mutating func responseEnd(trailers: ByteBuffer? = nil, now: NIODeadline) -> Action {
        switch state {
        case .streaming(let progress, .streaming(let upstreamKeepAlive)):
            // Reuse the connection only if both messages on it are complete; an early answer leaves request bytes
            // unsent, so that connection is closed (data-plane pitfall 5).
            let release: Release = upstreamKeepAlive && progress == .ended ? .park : .close
            if progress == .ended {
                state = .finished
                return .finishResponse(
                    trailers: trailers, release: release, then: .finished(close: persistence == .close))
            }
            if expectation == .awaitingContinue {
                // An early final answer to a client still waiting for `100`: its body may never come, so nothing
                // is read after this answer and the connection closes (RFC 9110 §10.1.1).
                persistence = .close
                state = .finished
                return .finishResponse(trailers: trailers, release: release, then: .finished(close: true))
            }
            state = .answered(progress)
            return .finishResponse(trailers: trailers, release: release, then: .awaitingRequestEnd)
        case .streaming(_, .awaitingHead):
            return fail(.responseWithoutHead)
        case .discardingRejection(let rejection):
            guard case .kept(let body, _) = kept else { return fail(.responseWithoutHead) }
            replays.insert(.newToken)
            if case .stepUp(let scopes) = rejection.retry { stepUp = scopes }
            let ticket = nextTicket()
            state = .awaitingToken(Upload(progress: .ended, pending: body), ticket, due: now + routeLimit)
            return .replayWithNewToken(
                release: rejection.head.keepAlive ? .park : .close, retry: rejection.retry, ticket: ticket)
        case .tunnelling, .closing, .finished:
            // The `101`'s end while the connection becomes a tunnel, or an end nobody waits for any more.
            return .none
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .modifying:
            return illegal("a response end")
        }
    }

    /// The upstream connection in use closed or failed (`cause` `.reset` when it simply went away).
    /// `neverProcessed` is the transport's word that the request reached no application (``UpstreamConnection``;
    /// for HTTP/1.1, a pooled connection closed before any byte of an answer).
    mutating func upstreamClosed(neverProcessed: Bool, cause: ConnectionFailure = .reset) -> Action {
        switch state {
        case .streaming(let progress, .awaitingHead):
            if neverProcessed, !bodySent, !replays.contains(.staleConnection), Self.isIdempotent(request.method) {
                // The transport says the request provably never reached a response (SPEC §8), so it goes again,
                // once, on a new connection — if repeating it is harmless and no body byte left. Anything else (an
                // invalid answer, half an answer, a reset after the first byte, a body already sent) may have been
                // acted on: never replayed.
                replays.insert(.staleConnection)
                let ticket = nextTicket()
                state = .connecting(Upload(progress: progress), ticket)
                return .connect(ticket)
            }
            return fail(.upstreamClosed(cause))
        case .discardingRejection:
            return fail(.upstreamClosed(cause))
        case .streaming(_, .streaming):
            // Part of the response is already with the client; closing is the only honest signal left.
            state = .closing
            return .closeConnection(closeUpstream: false)
        case .tunnelling, .closing, .finished:
            return .none
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .modifying:
            return illegal("an upstream close")
        }
    }

    // MARK: Time limits

    /// The connection's timer fired at `now`. `readsWithheld` whether the proxy is holding back the client's reads
    /// (no upstream yet, or it cannot take more): a body that does not flow then is not the client's stall — it is
    /// the upstream's when the upstream is there and takes nothing.
    mutating func deadlinesDue(now: NIODeadline, readsWithheld: Bool) -> Action {
        if let callDue, callDue <= now, state.awaitsAnswer, let limit = request.callLimit {
            // The client gives up on the call by now (gRPC's `grpc-timeout`): its answer is DEADLINE_EXCEEDED, and a
            // request already upstream is abandoned — its stream reset, its HTTP/1.1 connection closed.
            return fail(.callDeadlinePassed(limit))
        }
        switch state {
        case .awaitingToken(_, _, let due) where due <= now:
            if let stepUp {
                // The sign-in goes on in the browser; the next request uses what it stores.
                let note = "its sign-in was not finished within the route's limit"
                return fail(.insufficientScope(scopes: stepUp, note: note))
            }
            return fail(.tokenWaitTimedOut)
        case .streaming(_, .awaitingHead(let due?)) where due <= now:
            return fail(.responseHeadTimedOut)
        case .discardingRejection(let rejection) where rejection.due.map { $0 <= now } ?? false:
            return cannotReplay(rejection, because: "its answer did not end within the route's limit")
        default:
            break
        }
        guard let due = state.bodyDue, due <= now else { return .none }
        if readsWithheld {
            if case .streaming = state {
                // The body goes to an upstream that took none of it for the whole limit: its stall, not the client's
                // (nginx's `proxy_send_timeout`). Without this, an upstream that accepts and never reads would hold
                // both connections for as long as it liked. Nothing more is read; the exchange fails as a timeout.
                stopReading()
                return fail(.upstreamStoppedReading)
            }
            // No upstream yet (a token or a connection on its way): a body that does not flow is nobody's stall.
            state.setRequestProgress(.streaming(bodyDue: now + bodyStall))
            return .none
        }
        if expectation == .awaitingContinue {
            // The client waits for `100 Continue` (RFC 9110 §10.1.1), which nobody sent within the body-stall limit
            // (an upstream that answers neither 100 nor a final status, or a local endpoint). The wait is bounded:
            // the proxy sends 100 itself — §10.1.1 lets a server do so at any time — and from then on the client may
            // send, so the body-stall limit applies as to any body.
            expectation = .continued
            state.setRequestProgress(.streaming(bodyDue: now + bodyStall))
            return request.forwardsInformational ? .sendContinue : .none
        }
        // Answered, then the connection closes: nothing more is read from a client that stalled.
        stopReading()
        return fail(.bodyStalled)
    }
}
