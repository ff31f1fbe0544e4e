import NIOCore
import NIOHTTP1

/// Events from the token cache and the upstream connection.
extension ExchangeStateMachine {
    // MARK: Token and connection

    /// The token for `ticket` is known: get a connection. (A failure is answered: ``answer()``.)
    mutating func tokenArrived(_ ticket: Ticket) -> Action {
        guard case .awaitingToken(let upload, let current, _) = state, current == ticket else { return .none }
        state = .connecting(upload, ticket)
        return .connect(ticket)
    }

    /// The connection for `ticket` is ready: send the request, and what arrived of its body meanwhile.
    mutating func connected(_ ticket: Ticket, now: NIODeadline) -> Action {
        guard case .connecting(let upload, let current) = state, current == ticket else { return .parkConnection }
        let ended = upload.progress == .ended
        state = .streaming(upload.progress, .awaitingHead(due: ended ? now + routeLimit : nil))
        return .sendRequest(body: upload.pending, end: ended)
    }

    // MARK: Response parts

    /// A response head arrived. `retry` is what its challenge asks for, when it is a `401` that one replay with
    /// another token could fix (``BearerChallenge``); `keepAlive` whether the upstream keeps the connection.
    mutating func responseHead(
        status: HTTPResponseStatus, keepAlive: Bool, retry: TokenRetry?
    ) -> Action {
        guard case .streaming(let progress, .awaitingHead) = state else { return .none }
        if status == .switchingProtocols {
            // Only a WebSocket handshake asked to switch; to anything else a 101 is a protocol violation.
            guard request.upgrade == .webSocket, progress == .ended else { return .fail(.unexpectedSwitch) }
            state = .tunnelling
            return .switchProtocols
        }
        if status.code / 100 == 1 {
            guard request.forwardsInformational else { return .none }
            if status == .continue && expectation == .awaitingContinue { expectation = .continued }
            return .forwardInformational
        }
        if let retry, status == .unauthorized, !replays.contains(.newToken), progress == .ended,
            case .kept = kept
        {
            // This answer is read and dropped; the request goes again with a new token once it has ended.
            state = .discardingRejection(retry, upstreamKeepAlive: keepAlive)
            return .none
        }
        if progress != .ended && expectation == .awaitingContinue {
            persistence = .close  // see `answer()`: the announced body may never come
        }
        state = .streaming(progress, .streaming(upstreamKeepAlive: keepAlive))
        return .forwardResponseHead(keepAlive: persistence == .keepAlive)
    }

    /// The response head announced no length: its body ends when the upstream closes, and so does the client's
    /// connection (RFC 9112 §6.3 rule 8).
    mutating func responseEndsWithConnection() {
        persistence = .close
    }

    /// Whether response body parts go to the client now (not while a rejected answer is being dropped).
    var forwardsResponseBody: Bool {
        if case .streaming(_, .streaming) = state { return true }
        return false
    }

    /// The response's `end` arrived.
    mutating func responseEnd(now: NIODeadline) -> Action {
        switch state {
        case .streaming(let progress, .streaming(let upstreamKeepAlive)):
            // Reuse the connection only if both messages on it are complete; an early answer leaves request bytes
            // unsent, so that connection is closed (data-plane pitfall 5).
            let release: Release = upstreamKeepAlive && progress == .ended ? .park : .close
            if progress == .ended {
                state = .finished
                return .finishResponse(release: release, then: .finished(close: persistence == .close))
            }
            if expectation == .awaitingContinue {
                // An early final answer to a client still waiting for `100`: its body may never come, so nothing
                // is read after this answer and the connection closes (RFC 9110 §10.1.1; #21 item 3).
                state = .finished
                return .finishResponse(release: release, then: .finished(close: true))
            }
            state = .answered(progress)
            return .finishResponse(release: release, then: .awaitingRequestEnd)
        case .streaming(_, .awaitingHead):
            return .fail(.responseWithoutHead)
        case .discardingRejection(let retry, let upstreamKeepAlive):
            guard case .kept(let body, _) = kept else { return .fail(.responseWithoutHead) }
            replays.insert(.newToken)
            let ticket = nextTicket()
            state = .awaitingToken(Upload(progress: .ended, pending: body), ticket, due: now + routeLimit)
            return .replayWithNewToken(release: upstreamKeepAlive ? .park : .close, retry: retry, ticket: ticket)
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .tunnelling, .closing,
            .finished, .modifying:
            return .none
        }
    }

    /// The upstream connection in use closed or failed. `reused` whether it served an earlier exchange, and
    /// `sawBytes` whether any response byte came on it for this one.
    mutating func upstreamClosed(reused: Bool, sawBytes: Bool) -> Action {
        switch state {
        case .streaming(let progress, .awaitingHead):
            if reused, !sawBytes, !bodySent, !replays.contains(.staleConnection), Self.isIdempotent(request.method) {
                // A pooled connection the upstream had already closed, before sending a single byte of an answer:
                // the request provably never reached a response (SPEC §8), so it goes again, once, on a new
                // connection. Anything else (an invalid answer, half an answer, a reset after the first byte, a
                // body already sent) may have been acted on: never replayed.
                replays.insert(.staleConnection)
                let ticket = nextTicket()
                state = .connecting(Upload(progress: progress), ticket)
                return .connect(ticket)
            }
            return .fail(.upstreamClosed)
        case .discardingRejection:
            return .fail(.upstreamClosed)
        case .streaming(_, .streaming):
            // Part of the response is already with the client; closing is the only honest signal left.
            state = .closing
            return .closeConnection(closeUpstream: false)
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .tunnelling, .closing,
            .finished, .modifying:
            return .none
        }
    }

    /// RFC 9110 §9.2.2: repeating these is harmless.
    static func isIdempotent(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .OPTIONS, .PUT, .DELETE: true
        default: false
        }
    }
}
