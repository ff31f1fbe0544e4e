import BearerCodec
import Synchronization

/// The latest `DPoP-Nonce` one upstream origin gave (RFC 9449 §9) to each DPoP key that proves possession there,
/// which every proof of that key sent to the origin carries until it gives another. One per origin
/// (`scheme://host:port`), kept by ``UpstreamNonceStore`` across reloads and shared by the routes to it: a nonce is
/// the server's (§8), one origin's is never sent to another, and it goes with the key it was given to — the routes of
/// one sign-in share it, another sign-in's key (a discovered route's own) keeps its own, so a server that gives each
/// client its nonce is not answered with another's.
///
/// The value comes from a server, so it is held to the nonce grammar (§8.1: `1*NQCHAR`, which leaves out `"` and
/// `\`, so it goes into a proof's JSON as it is) and to ``maximumLength``; anything else is ignored, and the nonce
/// kept before stays.
final class UpstreamNonce: Sendable {
    /// The nonce of each key, by its RFC 7638 thumbprint; the least recently given first.
    private let values = Mutex<[(key: String, nonce: String)]>([])

    /// Longer values are not nonces worth keeping: one is sent with every request to the origin.
    static let maximumLength = 512
    /// How many keys' nonces an origin keeps: the sign-ins of a configuration, and those a `login` replaced; the
    /// oldest goes first (its key, if still used, is asked for a nonce once more).
    static let maximumKeys = 16

    /// The nonce to send now with a proof of the key whose thumbprint is `key`; nil until the origin gave one.
    func current(for key: String) -> String? {
        values.withLock { values in values.first { $0.key == key }?.nonce }
    }

    /// Keeps the `DPoP-Nonce` of `response` to a request whose proof was signed by the key `key` names, when it
    /// carries a valid one. Returns whether it did.
    @discardableResult
    func note(_ response: UpstreamResponse, for key: String) -> Bool {
        guard let nonce = response.firstValue(of: "dpop-nonce"), Self.isNonce(nonce) else { return false }
        values.withLock { values in
            values.removeAll { $0.key == key }
            if values.count >= Self.maximumKeys { values.removeFirst(values.count - Self.maximumKeys + 1) }
            values.append((key, nonce))
        }
        return true
    }

    /// RFC 9449 §8.1: NQCHAR = %x21 / %x23-5B / %x5D-7E, at most ``maximumLength`` of them.
    static func isNonce(_ text: String) -> Bool {
        (1...maximumLength).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}
