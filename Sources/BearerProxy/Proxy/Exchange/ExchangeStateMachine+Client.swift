import NIOCore

/// Events from the client's side and the proxy's own answers.
extension ExchangeStateMachine {
    // MARK: Routing

    /// The request is for one of the proxy's own endpoints.
    mutating func serveLocally() {
        guard case .routing(let progress) = state else { return }
        state = .local(progress)
    }

    /// The request goes to a route's upstream. `needsToken` when the route sends a token and none is cached;
    /// `sendsToken` whether the route sends one at all (then its body is kept for one replay).
    mutating func proxy(sendsToken: Bool, needsToken: Bool, limit: TimeAmount, now: NIODeadline) -> Action {
        guard case .routing(let progress) = state else { return .none }
        routeLimit = limit
        kept = sendsToken ? .kept([], bytes: 0) : .notNeeded
        let ticket = nextTicket()
        if needsToken {
            state = .awaitingToken(Upload(progress: progress), ticket, due: now + limit)
            return .fetchToken(ticket, claims: nil)
        }
        state = .connecting(Upload(progress: progress), ticket)
        return .connect(ticket)
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
        case .routing, .local, .awaitingLocalAnswer, .answered, .awaitingToken, .connecting, .streaming,
            .discardingRejection, .tunnelling, .closing, .finished, .modifying:
            return .none
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
        case .routing:
            state = .routing(.ended)
            return .none
        case .local:
            let ticket = nextTicket()
            state = .awaitingLocalAnswer(ticket)
            return .answerLocally(ticket)
        case .answered:
            state = .finished
            return .finish(close: persistence == .close)
        case .awaitingToken(var upload, let ticket, let due):
            upload.progress = .ended
            state = .awaitingToken(upload, ticket, due: due)
            return .none
        case .connecting(var upload, let ticket):
            upload.progress = .ended
            state = .connecting(upload, ticket)
            return .none
        case .streaming(.streaming, .awaitingHead):
            state = .streaming(.ended, .awaitingHead(due: now + routeLimit))
            return .forwardEnd
        case .streaming(.streaming, let response):
            state = .streaming(.ended, response)
            return .forwardEnd
        case .awaitingLocalAnswer, .streaming, .discardingRejection, .tunnelling, .closing, .finished, .modifying:
            return .none
        }
    }

    /// Nothing more is read from this client (its request could not be read, or stalled): the exchange is answered
    /// as if its request had ended, and the connection closes after it.
    mutating func stopReading() {
        persistence = .close
        state.setRequestProgress(.ended)
    }

    /// The server is shutting down gracefully: this exchange is finished, then the connection closes.
    mutating func quiesce() {
        persistence = .close
    }

    // MARK: The proxy's own answers

    /// Whether an asynchronous step with `ticket` is still the one this exchange waits for.
    func awaits(_ ticket: Ticket) -> Bool {
        switch state {
        case .awaitingLocalAnswer(let current), .awaitingToken(_, let current, _), .connecting(_, let current):
            current == ticket
        default:
            false
        }
    }

    /// The proxy answers by itself — a refusal, a preflight, a local endpoint, a failure (SPEC §8). Once a response
    /// is underway that is impossible: the connection closes instead.
    mutating func answer() -> Action {
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
            // cannot be reused, and nothing is left to wait for: it closes once this answer is written (#21 item 3).
            persistence = .close
            state = .finished
            return .answer(keepAlive: false, closeUpstream: closeUpstream, then: .finished(close: true))
        }
        if progress == .ended {
            state = .finished
            return .answer(
                keepAlive: persistence == .keepAlive, closeUpstream: closeUpstream,
                then: .finished(close: persistence == .close))
        }
        state = .answered(progress)
        return .answer(keepAlive: persistence == .keepAlive, closeUpstream: closeUpstream, then: .awaitingRequestEnd)
    }

    /// The client connection closed. Returns whether an upstream connection was in use (then it is closed: its
    /// response may be half-read, so it must not be pooled) and whether the response had ended.
    mutating func clientClosed() -> (closeUpstream: Bool, responseEnded: Bool) {
        let result: (Bool, Bool)
        switch state {
        case .streaming, .discardingRejection: result = (true, false)
        case .answered, .finished, .tunnelling: result = (false, true)
        default: result = (false, false)
        }
        state = .finished
        return result
    }
}

extension ExchangeStateMachine {
    /// Whether to let the client's next `read()` through, `upstreamWritable` telling whether the upstream connection
    /// in use can take more. Backpressure: while the request body streams, only what the upstream can take is read.
    func wantsRead(upstreamWritable: Bool) -> Bool {
        switch state {
        case .awaitingToken, .connecting, .streaming, .discardingRejection, .tunnelling:
            // A WebSocket client's frames wait in the socket until the upstream has switched protocols.
            if request.upgrade == .webSocket { return false }
        default:
            return true
        }
        switch state {
        case .awaitingToken(let upload, _, _), .connecting(let upload, _):
            return upload.progress == .ended
        case .streaming(.streaming, _):
            return upstreamWritable
        default:
            // After the request ends keep reading, so that a client that goes away is noticed (and a pipelined
            // request is queued).
            return true
        }
    }

    /// Whether the response's head has gone to the client (then a failure can only close the connection).
    var responseStarted: Bool {
        switch state {
        case .streaming(_, .streaming), .answered, .tunnelling, .closing, .finished: true
        default: false
        }
    }
}
