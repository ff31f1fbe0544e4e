import NIOCore

/// The connection's one timer, for every time limit it has (SPEC §8): between exchanges the idle and request-head
/// limits, during one the body-stall limit and the route's limit for a token and for the response head.
///
/// The deadlines themselves are state of ``ConnectionStateMachine`` and ``ExchangeStateMachine``; this only keeps
/// the task that fires for them. Scheduling and cancelling a task per request costs several allocations and the
/// loop's task-queue lock, so the task is moved only when a deadline comes earlier than the one it waits for: it
/// fires at the earliest deadline it was armed for, the handler acts on whatever is due, and arms it for the next.
/// On a busy keep-alive connection it runs about once per limit instead of once per request. Inside an event the
/// deadlines change several times (a request's head, its routing, its send); they are only marked stale then, and
/// the task is armed once, when the outermost event ends.
struct ConnectionTimer {
    /// When the armed task fires; the distant future while none is armed, so that the usual question (is one armed
    /// early enough?) is answered without touching the task, whose copy costs retains.
    private(set) var firesAt = NIODeadline.distantFuture
    private var task: Scheduled<Void>?
    /// The deadlines changed during the event being handled.
    private var stale = false

    /// Whether a task must be scheduled so that one fires no later than `deadline`: a later deadline never moves the
    /// one armed.
    func needsArming(for deadline: NIODeadline) -> Bool {
        deadline < firesAt
    }

    /// `task` fires at `deadline` from now on; the one it replaces, if any, is cancelled.
    mutating func arm(_ task: Scheduled<Void>, at deadline: NIODeadline) {
        self.task?.cancel()
        self.task = task
        firesAt = deadline
    }

    /// Notes that the timer of an HTTP/2 stream's connection fires at `deadline` for it (``HTTP2StreamTable``): its
    /// streams share one scheduled task, rather than each scheduling and cancelling its own.
    mutating func armShared(at deadline: NIODeadline) {
        task?.cancel()
        task = nil
        firesAt = deadline
    }

    /// Keeps `task` — one of the connection's own, the lingering close's limit — so that it is cancelled with the
    /// timer; no deadline is armed after it.
    mutating func keep(_ task: Scheduled<Void>) {
        cancel()
        self.task = task
    }

    /// The armed task has fired: none is armed.
    mutating func fired() {
        task = nil
        firesAt = .distantFuture
    }

    /// Cancels the armed task, if any.
    mutating func cancel() {
        task?.cancel()
        task = nil
        firesAt = .distantFuture
    }

    /// The deadlines changed inside an event: the timer is armed for them when it ends.
    mutating func markStale() {
        stale = true
    }

    /// Whether the deadlines changed since the last call.
    mutating func takeStale() -> Bool {
        defer { stale = false }
        return stale
    }
}
