import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How one sign-in's token requests prove possession of its DPoP key (RFC 9449): whether they do at all (the
/// account's `tokenType`, and for `auto` the server's metadata), the key (shared by every process through its
/// ``DPoPKeyFile``; made, the first time, with the algorithm the server's metadata prefers), and the nonces the
/// servers handed out (§8), kept per server and replaced by every answer that carries a `DPoP-Nonce`.
package final class DPoPBinding: Sendable {
    package let preference: TokenTypePreference
    package let keyFile: DPoPKeyFile
    /// The algorithm of a key made for this sign-in's next token request (``DPoPKey/Algorithm/preferred(offered:)``
    /// of the server it goes to); a stored key is used whatever its algorithm.
    package let newKeyAlgorithm: DPoPKey.Algorithm
    private let now: @Sendable () -> Date
    /// The latest `DPoP-Nonce` of each server, by origin (`scheme://host:port`); shared by the copies
    /// ``ifApplies(to:)`` makes for one server's algorithms.
    private let nonces: ServerNonces

    /// Nonces by origin, in a reference the copies share.
    private final class ServerNonces: Sendable {
        let byOrigin = Mutex<[String: String]>([:])
    }

    package convenience init(
        preference: TokenTypePreference, keyFile: DPoPKeyFile, newKeyAlgorithm: DPoPKey.Algorithm = .es256,
        now: @escaping @Sendable () -> Date
    ) {
        self.init(
            preference: preference, keyFile: keyFile, newKeyAlgorithm: newKeyAlgorithm, now: now,
            nonces: ServerNonces())
    }

    private init(
        preference: TokenTypePreference, keyFile: DPoPKeyFile, newKeyAlgorithm: DPoPKey.Algorithm,
        now: @escaping @Sendable () -> Date, nonces: ServerNonces
    ) {
        self.preference = preference
        self.keyFile = keyFile
        self.newKeyAlgorithm = newKeyAlgorithm
        self.now = now
        self.nonces = nonces
    }

    /// Whether a sign-in's token requests carry proofs — the one rule for the account's flows and the discovered
    /// routes' sign-ins: always for `dpop`, never for `bearer`, and for `auto` when the authorization server lists
    /// an algorithm the proxy signs with (``DPoPKey/Algorithm``: `ES256`, `EdDSA`) in
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1) or the protected resource accepts only DPoP-bound tokens
    /// (`dpop_bound_access_tokens_required`, RFC 9728 §2) — a bearer token it would refuse.
    static func applies(
        _ preference: TokenTypePreference, signingAlgorithms: [String], resourceRequiresProof: Bool = false
    ) -> Bool {
        switch preference {
        case .bearer: false
        case .dpop: true
        case .auto:
            resourceRequiresProof
                || signingAlgorithms.contains { DPoPKey.Algorithm(rawValue: $0) != nil }
        }
    }

    /// Whether token requests to a server described by `endpoints` carry proofs (the rule above).
    func applies(to endpoints: ProviderEndpoints) -> Bool {
        Self.applies(preference, signingAlgorithms: endpoints.dpopSigningAlgorithms)
    }

    /// This binding, making any new key with the algorithm `endpoints` prefer, when ``applies(to:)`` says so; else
    /// nil: what a flow passes with its token requests.
    func ifApplies(to endpoints: ProviderEndpoints) -> DPoPBinding? {
        applies(to: endpoints) ? choosing(offered: endpoints.dpopSigningAlgorithms) : nil
    }

    /// This binding, making any new key with the algorithm the server `found` prefers, when a discovered route's
    /// sign-in with what discovery found proves possession of its key
    /// (``applies(_:signingAlgorithms:resourceRequiresProof:)``); else nil.
    func ifApplies(to found: DiscoveredAuthorization) -> DPoPBinding? {
        Self.applies(
            preference, signingAlgorithms: found.dpopSigningAlgorithms,
            resourceRequiresProof: found.dpopBoundAccessTokensRequired)
            ? choosing(offered: found.dpopSigningAlgorithms) : nil
    }

    /// This binding, making any new key with the algorithm `offered` prefers, when the rule above says a server
    /// that offers `offered` gets proofs; else nil (the built-in `dev` issuer, which has no metadata to fetch).
    func ifApplies(offered: [String]) -> DPoPBinding? {
        Self.applies(preference, signingAlgorithms: offered) ? choosing(offered: offered) : nil
    }

    /// This binding with ``newKeyAlgorithm`` chosen for a server that offers `offered`: the same key file and nonces.
    private func choosing(offered: [String]) -> DPoPBinding {
        let algorithm = DPoPKey.Algorithm.preferred(offered: offered)
        guard algorithm != newKeyAlgorithm else { return self }
        return DPoPBinding(
            preference: preference, keyFile: keyFile, newKeyAlgorithm: algorithm, now: now, nonces: nonces)
    }

    /// The key, loaded (or made, the first time, with ``newKeyAlgorithm``) from its file.
    package func key() throws(TokenError) -> DPoPKey {
        do {
            return try keyFile.key(creating: newKeyAlgorithm)
        } catch {
            throw .providerUnavailable(
                reason: "cannot read or write the DPoP key file: \(error)", retryAfterSeconds: 5)
        }
    }

    /// A proof for a `method` request to `url`, with the nonce its server gave last (none if it gave none).
    package func proof(key: DPoPKey, method: String, url: String) -> String {
        let nonce = nonces.byOrigin.withLock { $0[Self.origin(of: url)] }
        return key.proof(method: method, url: url, at: now(), nonce: nonce)
    }

    /// Keeps the `DPoP-Nonce` of an answer from `url`'s server, when it sent one (RFC 9449 §8.2: the newest wins).
    /// Returns whether it differs from the one kept before.
    @discardableResult
    func noteNonce(in headers: HTTPHeaders, from url: String) -> Bool {
        guard let nonce = headers.first(name: "dpop-nonce"), Self.isNonce(nonce) else { return false }
        return nonces.byOrigin.withLock { nonces in
            let origin = Self.origin(of: url)
            defer { nonces[origin] = nonce }
            return nonces[origin] != nonce
        }
    }

    /// RFC 9449 §8.1: `nonce = 1*NQCHAR`, NQCHAR = %x21 / %x23-5B / %x5D-7E.
    private static func isNonce(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    /// `scheme://authority` of `url`: nonces are a server's (RFC 9449 §8), not an endpoint's.
    static func origin(of url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let end = rest.firstIndex { (character: Character) -> Bool in
            character == "/" || character == "?" || character == "#"
        }
        return String(url[..<(end ?? rest.endIndex)]).lowercased()
    }
}
