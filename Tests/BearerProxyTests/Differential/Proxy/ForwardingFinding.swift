/// Something the proxy forwarded that the differential harness does not allow, with the bytes to replay it.
struct ForwardingFinding: Sendable, CustomStringConvertible {
    enum Kind: String, Sendable, Comparable {
        /// The references frame the client's stream differently where the proxy forwarded a message, or the
        /// upstream's bytes are framed differently by them, or the forwarded message is not the client's: what
        /// request smuggling is made of (RFC 9112 §11.2).
        case framedDifferently = "SECURITY: framed differently"
        /// The proxy forwarded a message that a reference refuses, or never reads because it has stopped reading
        /// the connection (but none frames differently): the strict codec of issue #24 refuses it.
        case beyondAReference = "forwarded what a reference refuses or does not read"
        /// The forwarded message is framed alike but is not the client's message less hop-by-hop plus the proxy's
        /// fields (condition 3).
        case rewrittenWrongly = "forwarded message differs from the client's"

        static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    let kind: Kind
    let input: DifferentialInput
    let detail: String

    var description: String {
        "[\(kind.rawValue)] \(input) \(input.escaped) splits \(input.splits)\n    \(detail)"
    }
}
