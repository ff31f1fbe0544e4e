import Synchronization

/// The upstreams' DPoP nonces (RFC 9449 §9), one ``UpstreamNonce`` per origin, held by the running proxy rather than
/// by a generation: a reload keeps them, so the first request after it does not pay a `use_dpop_nonce` round trip
/// the one before had already paid. The nonces are kept per key within an origin, and keys outlive reloads (they
/// are the sign-ins'), so a reload that changes the account or a route's sign-in finds no nonce for the new key.
package final class UpstreamNonceStore: Sendable {
    private let origins = Mutex<[String: UpstreamNonce]>([:])

    package init() {}

    /// The nonces of `origin` (``UpstreamProofs/origin(of:)``), the same object for every route and generation.
    func nonce(forOrigin origin: String) -> UpstreamNonce {
        origins.withLock { origins in
            if let kept = origins[origin] { return kept }
            let made = UpstreamNonce()
            origins[origin] = made
            return made
        }
    }
}
