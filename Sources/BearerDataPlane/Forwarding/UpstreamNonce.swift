import BearerCodec
import Synchronization

/// The latest `DPoP-Nonce` one upstream origin gave (RFC 9449 §9), which every proof sent to it carries until it
/// gives another. One per origin (`scheme://host:port`) in a generation, shared by the routes to it: a nonce is the
/// server's (§8), and one origin's is never sent to another.
///
/// The value comes from a server, so it is held to the nonce grammar (§8.1: `1*NQCHAR`, which leaves out `"` and
/// `\`, so it goes into a proof's JSON as it is) and to ``maximumLength``; anything else is ignored, and the nonce
/// kept before stays.
final class UpstreamNonce: Sendable {
    private let value = Mutex<String?>(nil)

    /// Longer values are not nonces worth keeping: one is sent with every request to the origin.
    static let maximumLength = 512

    /// The nonce to send now; nil until the origin gave one.
    var current: String? { value.withLock { $0 } }

    /// Keeps the `DPoP-Nonce` of `response`, when it carries a valid one. Returns whether it did.
    @discardableResult
    func note(_ response: UpstreamResponse) -> Bool {
        guard let nonce = response.firstValue(of: "dpop-nonce"), Self.isNonce(nonce) else { return false }
        value.withLock { $0 = nonce }
        return true
    }

    /// RFC 9449 §8.1: NQCHAR = %x21 / %x23-5B / %x5D-7E, at most ``maximumLength`` of them.
    static func isNonce(_ text: String) -> Bool {
        (1...maximumLength).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}
