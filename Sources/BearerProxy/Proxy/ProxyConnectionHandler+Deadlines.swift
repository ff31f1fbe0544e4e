import NIOCore

/// The connection's two time limits — the idle keep-alive limit between exchanges and the response head's limit
/// while an upstream is silent — served by one lazily re-armed event-loop task.
///
/// Scheduling and cancelling a task per request costs several allocations and the loop's task-queue lock; here a
/// request only records its deadline. The task fires at the earliest deadline it was armed for, acts on whatever
/// is due, and re-arms for the next; a later deadline never moves it, so on a busy keep-alive connection it runs
/// about once per limit (60 s by default) instead of once per request.
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
        let deadline = context.eventLoop.now + server.clientIdle
        idleDeadline = deadline
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
        if exchange == nil, queued.isEmpty, let idle = idleDeadline, idle <= now {
            // RFC 9112 §9.3: either side may close an idle persistent connection; nothing is in flight.
            server.logger.debug("closing an idle client connection", metadata: ["client": "\(clientAddress ?? "-")"])
            context.close(promise: nil)
            return
        }
        if case .proxied(let leg)? = exchange?.kind, !leg.sawResponse, let due = leg.responseDeadline, due <= now {
            leg.responseDeadline = nil
            let seconds = leg.responseTimeout.nanoseconds / 1_000_000_000
            reject(.upstreamTimeout(upstream: leg.origin.display, seconds: seconds))
        }
        if let next = nextDeadline { armTimer(for: next) }
    }

    /// The earliest deadline that still applies.
    private var nextDeadline: NIODeadline? {
        if let exchange {
            guard case .proxied(let leg) = exchange.kind, !leg.sawResponse else { return nil }
            return leg.responseDeadline
        }
        return idleDeadline
    }
}
