/// The options of a message's `Connection` fields (RFC 9110 §7.6.1), as far as the proxy needs them.
package struct ConnectionOptions: Sendable, Equatable {
    /// `close` was listed.
    package var close = false
    /// `keep-alive` was listed (an HTTP/1.0 client asking to keep the connection).
    package var keepAlive = false
    /// `upgrade` was listed: with an `Upgrade` field, the message asks to switch protocols (RFC 9110 §7.8).
    package var upgrade = false
    /// Other options, each naming a field that is hop-by-hop for this message: their ranges in the head. Empty (no
    /// allocation) for the usual `keep-alive`, `close` and `upgrade`.
    package var named: [Range<Int>] = []

    package init() {}

    /// Only `keep-alive` was listed: in HTTP/1.1, which keeps connections open anyway, the field says nothing
    /// (RFC 9112 §9.3) and names no field.
    var onlyKeepAlive: Bool { keepAlive && !close && !upgrade && named.isEmpty }

    /// The most options other than the standard ones a message may name; more is refused.
    static let maximumNamed = 8
}
