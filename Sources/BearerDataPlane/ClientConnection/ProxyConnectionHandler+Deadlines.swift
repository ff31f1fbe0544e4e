import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// The connection's time limits (SPEC §8), served by one lazily re-armed event-loop task:
///
/// - between exchanges, the idle keep-alive limit;
/// - once a request head has begun to arrive, the request-head limit (a client trickling header bytes);
/// - while a request body streams and the proxy is ready to read it, the body-stall limit;
/// - while a request waits for its token, and then for the response head, the route's limit.
///
/// The deadlines themselves are state, kept by ``ConnectionStateMachine`` and ``ExchangeStateMachine``. Scheduling
/// and cancelling a task per request costs several allocations and the loop's task-queue lock; here a request only
/// records its deadlines. The task fires at the earliest deadline it was armed for, acts on whatever
/// is due, and re-arms for the next; a later deadline never moves it, so on a busy keep-alive connection it runs
/// about once per limit instead of once per request.
extension ProxyConnectionHandler {
    /// Makes the connection's timer fire no later than `deadline`.
    func armTimer(for deadline: NIODeadline) {
        // `timerFiresAt` is the distant future while no timer is armed: the usual case returns without reading
        // `timer`, whose copy costs retains (#24 session 18). A lingering close's timer is its own and stays.
        if timerFiresAt <= deadline || removed || connection.isLingering { return }
        timer?.cancel()
        timerFiresAt = deadline
        // Captured strongly: nothing refers to this handler weakly, so it has no side table and its retains and
        // releases stay on the runtime's fast path (#24 session 17). The task keeps no closed connection's handler
        // alive: none is armed once the handler has left the pipeline, and leaving cancels the one armed.
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { self.timerFired() }
    }

    /// Makes the timer fire no later than the earliest deadline that applies now — or, inside an event, that applies
    /// once the event is over (``leaveEvent()``): an event moves the machines through several states (a request's
    /// head, its routing, its send; a response's head and end), and working out the earliest deadline after each
    /// was 7 readings of both machines a request (#24 session 21). A deadline that applies only between two steps
    /// of one event is gone by its end, and nothing can fire in between: the loop runs nothing else meanwhile.
    func updateTimer() {
        if clock.isInEvent {
            timerStale = true
        } else if let next = connection.nextDeadline {
            armTimer(for: next)
        }
    }

    /// An event begins: its time is read once (``EventClock``), and the timer is armed once, when it ends.
    func enterEvent() {
        clock.enter()
    }

    /// An event ends; the outermost's end arms the timer for the deadlines it left (``updateTimer()``).
    func leaveEvent() {
        clock.leave()
        guard timerStale, !clock.isInEvent else { return }
        timerStale = false
        if let next = connection.nextDeadline { armTimer(for: next) }
    }

    func cancelTimer() {
        timer?.cancel()
        timer = nil
        timerFiresAt = .distantFuture
    }

    private func timerFired() {
        timer = nil
        timerFiresAt = .distantFuture
        let now = context.eventLoop.now
        // Whether reads are held back matters only to an exchange's limits: asked only then.
        let withheld = connection.exchange != nil && !wantsRead
        let action = connection.deadlinesDue(now: now, readsWithheld: withheld)
        run(action)
        if case .close = action { return }
        if context.channel.isActive { updateTimer() }
    }
}
