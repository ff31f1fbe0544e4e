/// The nonces a fake DPoP server hands out (RFC 9449 §8 at an authorization server, §9 at a resource server):
/// `<prefix>-1`, then a new one at each ``rotate()``.
struct FakeDPoPNonces: Sendable {
    /// When the server demands a nonce.
    enum Rule: Sendable {
        case never
        /// Every proof must carry the current nonce; every answer carries it.
        case required
        /// Every request is refused with a fresh nonce: a client that follows blindly would loop.
        case rotateEveryRequest
    }

    private let prefix: String
    private(set) var current: String
    private var count = 1

    init(prefix: String) {
        self.prefix = prefix
        current = prefix + "-1"
    }

    /// A new current nonce: proofs carrying the old one are refused with `use_dpop_nonce`.
    mutating func rotate() {
        count += 1
        current = "\(prefix)-\(count)"
    }
}
