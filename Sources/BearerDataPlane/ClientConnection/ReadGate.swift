import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// Backpressure as NIO does it: a `read()` that arrives while the other side cannot take more is held, not passed
/// on, and passed on when it can (NIO's glue pattern). The client connection, the upstream connection and each end
/// of a tunnel hold reads this one way; what "can take more" means is theirs to say.
struct ReadGate {
    /// A `read()` was asked for and not passed on yet.
    private(set) var isHolding = false

    /// A `read()` arrived: whether to pass it on now. When `open` is false it is held.
    mutating func admit(open: Bool) -> Bool {
        if open { return true }
        isHolding = true
        return false
    }

    /// The other side may take more again: whether the held `read()` must be passed on now. `open` is asked only
    /// when a read is held.
    package mutating func release(open: @autoclosure () -> Bool) -> Bool {
        guard isHolding, open() else { return false }
        isHolding = false
        return true
    }
}
