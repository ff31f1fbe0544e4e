import NIOCore

/// The connection's time limits (SPEC §8), served by one lazily re-armed event-loop task:
///
/// - between exchanges, the idle keep-alive limit;
/// - once a request head has begun to arrive, the request-head limit (a client trickling header bytes);
/// - while a request body streams and the proxy is ready to read it, the body-stall limit;
/// - while a request waits for its token, and then for the response head, the route's limit.
///
/// Scheduling and cancelling a task per request costs several allocations and the loop's task-queue lock; here a
/// request only records its deadlines. The task fires at the earliest deadline it was armed for, acts on whatever
/// is due, and re-arms for the next; a later deadline never moves it, so on a busy keep-alive connection it runs
/// about once per limit instead of once per request.
extension ProxyConnectionHandler {
    /// Makes the connection's timer fire no later than `deadline`.
    func armTimer(for deadline: NIODeadline) {
        if timer != nil, timerFiresAt <= deadline { return }
        timer?.cancel()
        timerFiresAt = deadline
        // `self` is already weakly referenced by its upstream connections, so capturing it weakly costs nothing
        // more; the task never keeps a closed connection's handler alive.
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.timerFired()
        }
    }

    /// The connection is between exchanges from now on: it may stay idle for ``ProxyTimeouts/clientIdle``.
    func startIdleDeadline() {
        let deadline = context.eventLoop.now + server.timeouts.clientIdle
        idleDeadline = deadline
        armTimer(for: deadline)
    }

    /// Bytes of a request head have arrived but not the whole head: it must be complete within
    /// ``ProxyTimeouts/requestHead`` of now.
    func startHeadDeadline() {
        guard headDeadline == nil else { return }
        let deadline = context.eventLoop.now + server.timeouts.requestHead
        headDeadline = deadline
        armTimer(for: deadline)
    }

    /// The request body made progress (or its head just arrived): the next body byte is due within
    /// ``ProxyTimeouts/bodyStall``. Only the first call arms the timer; later ones move the deadline, which the
    /// timer finds when it fires.
    func startBodyDeadline(_ exchange: Exchange) {
        let deadline = context.eventLoop.now + server.timeouts.bodyStall
        let first = exchange.bodyDeadline == nil
        exchange.bodyDeadline = deadline
        if first { armTimer(for: deadline) }
    }

    /// The request waits for its token: no longer than the route's limit (SPEC §8).
    func startTokenDeadline(_ leg: UpstreamLeg) {
        let deadline = context.eventLoop.now + leg.responseTimeout
        leg.tokenDeadline = deadline
        armTimer(for: deadline)
    }

    /// The request has gone upstream in full: the response head is due within the route's limit.
    func startResponseTimer(_ leg: UpstreamLeg) {
        guard !leg.sawResponse else { return }
        let deadline = context.eventLoop.now + leg.responseTimeout
        leg.responseDeadline = deadline
        armTimer(for: deadline)
    }

    func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    private func timerFired() {
        timer = nil
        let now = context.eventLoop.now
        if let exchange {
            exchangeDeadlinesDue(exchange, now: now)
        } else if queued.isEmpty {
            if let due = headDeadline, due <= now {
                return requestHeadTimedOut()
            }
            if let idle = idleDeadline, idle <= now {
                // RFC 9112 §9.3: either side may close an idle persistent connection; nothing is in flight.
                server.logger.debug(
                    "closing an idle client connection", metadata: ["client": "\(clientAddress ?? "-")"])
                context.close(promise: nil)
                return
            }
        }
        if context.channel.isActive, let next = nextDeadline { armTimer(for: next) }
    }

    private func exchangeDeadlinesDue(_ exchange: Exchange, now: NIODeadline) {
        if case .proxied(let leg) = exchange.kind {
            let seconds = leg.responseTimeout.nanoseconds / 1_000_000_000
            if let due = leg.tokenDeadline, due <= now {
                leg.tokenDeadline = nil
                reject(
                    .tokenUnavailable(
                        detail: "No access token for this route within its \(seconds) s limit; the token request "
                            + "goes on, so a retry may find it.",
                        retryAfterSeconds: 1))
            } else if !leg.sawResponse, let due = leg.responseDeadline, due <= now {
                leg.responseDeadline = nil
                reject(.upstreamTimeout(upstream: leg.origin.display, seconds: seconds))
            }
        }
        guard self.exchange === exchange, !exchange.requestEnded, let due = exchange.bodyDeadline, due <= now
        else { return }
        if !wantsRead || (exchange.expectsContinue && !exchange.sentContinue) {
            // The body is not flowing because the proxy is not reading it (no upstream yet, or it cannot take
            // more), or because the client waits for `100 Continue`: not the client's stall.
            exchange.bodyDeadline = now + server.timeouts.bodyStall
            return
        }
        requestBodyStalled()
    }

    /// The request head did not arrive in full within its limit: `408`, then close (RFC 9110 §15.5.9).
    private func requestHeadTimedOut() {
        headDeadline = nil
        let seconds = server.timeouts.requestHead.nanoseconds / 1_000_000_000
        answerAndClose(.requestTimeout(detail: "The request head did not arrive within \(seconds) s."))
    }

    /// The request body stopped flowing: `408` if nothing has been answered yet, then close either way.
    private func requestBodyStalled() {
        queued.removeAll()
        let seconds = server.timeouts.bodyStall.nanoseconds / 1_000_000_000
        answerAndClose(.requestTimeout(detail: "The request body stopped arriving for \(seconds) s."))
    }

    /// The earliest deadline that still applies.
    private var nextDeadline: NIODeadline? {
        guard let exchange else { return earliest(headDeadline, idleDeadline) }
        var next = exchange.requestEnded ? nil : exchange.bodyDeadline
        if case .proxied(let leg) = exchange.kind {
            next = earliest(next, leg.tokenDeadline)
            if !leg.sawResponse { next = earliest(next, leg.responseDeadline) }
        }
        return next
    }

    private func earliest(_ first: NIODeadline?, _ second: NIODeadline?) -> NIODeadline? {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }
}
