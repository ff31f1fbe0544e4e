import NIOCore

/// The time as one event on a connection sees it: read from the event loop once per event, not at each of the dozen
/// places a request's handling asks (the connection's and the exchange's machines, timers, the pool, the access
/// log) — reading `clock_gettime` at each would be 4 % of the proxy's user time (perf; docs/benchmarks.md).
///
/// Outside an event (``enter()``/``leave()``) every ``now(_:)`` reads the loop's clock afresh, so a path that is not
/// wrapped is slower, never stale; inside one, the first reading is kept until the outermost event ends. Events
/// nest (a write that fails inside a read closes the upstream, whose callback is an event of its own): the time
/// is the outermost's. An event handles bytes that were already there when it began, so the microseconds it runs
/// are not the machines' business: every deadline is at least a second away (SPEC §8's timeouts).
struct EventClock {
    private var cached: NIODeadline?
    private var depth = 0

    init() {}

    /// The event's time, or the loop's now outside an event.
    package mutating func now(_ loop: any EventLoop) -> NIODeadline {
        if depth == 0 { return loop.now }
        if let cached { return cached }
        let now = loop.now
        cached = now
        return now
    }

    /// The event's time once it has been read; nil outside an event, or before its first reading. Lets a caller
    /// skip looking its loop up (a retain of the context and the loop) when the time is known (bench/counts.sh).
    package var current: NIODeadline? { cached }

    /// Whether an event is being handled.
    var isInEvent: Bool { depth > 0 }

    /// An event begins.
    mutating func enter() {
        depth += 1
    }

    /// An event ends: the outermost's end forgets its time.
    mutating func leave() {
        depth -= 1
        if depth == 0 { cached = nil }
    }
}
