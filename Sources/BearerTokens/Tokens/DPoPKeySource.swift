import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// Where a token cache finds the key its DPoP-bound tokens (RFC 9449) are bound to, for the proofs the data plane
/// signs: the account's key file, or the key of the sign-in a discovered route uses now.
package protocol DPoPKeySource: Sendable {
    /// The key whose RFC 7638 thumbprint is `thumbprint`, when this source holds it; nil otherwise (a token bound to
    /// a key signed out since is sent with no key: the next token is bound to the new one).
    func proofKey(thumbprint: String) -> DPoPKey?
}
