import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a sign-in's ``DPoPKey`` lives: `dpop-<name>.json` beside its token cache, a ``StateFile`` — 0600, atomic,
/// created under the state directory's lock — so every process of the machine proves possession of the same key and
/// a token (or refresh token) one of them obtained works in all (SPEC §7 "Sender-constrained tokens").
///
/// The key's algorithm (``DPoPKey/Algorithm``) is chosen when the key is made — EdDSA when the server's metadata
/// offers it, else ES256 — and recorded in the file; a stored key is used as it is for as long as it exists, whatever
/// the server lists later (a new key would unbind the sign-in's refresh token). `logout` deletes it, and the next
/// sign-in chooses again.
///
/// Without a state directory (`--no-persist`) the key lives in memory for the life of the process.
package final class DPoPKeyFile: Sendable {
    /// The file's contents: the private key, its algorithm, and the thumbprint so `status` can show it without the
    /// key.
    package struct Stored: Codable, Equatable, Sendable, CustomStringConvertible, CustomReflectable {
        package var version: Int
        /// `ES256` or `EdDSA` (``DPoPKey/Algorithm``); absent in files written before EdDSA keys existed, which hold
        /// P-256 keys: absent reads as `ES256`.
        package var algorithm: String?
        /// base64url of the 32-byte private part: the P-256 scalar, or the Ed25519 seed.
        var privateKey: String
        package var thumbprint: String

        package var description: String { "DPoPKeyFile.Stored(<redacted>, jkt: \(thumbprint))" }
        package var customMirror: Mirror {
            Mirror(
                self,
                children: [
                    "version": version, "algorithm": algorithm as Any, "privateKey": "<redacted>",
                    "thumbprint": thumbprint,
                ],
                displayStyle: .struct)
        }
    }

    private let file: StateFile<Stored>?
    /// The key of a sign-in without a state directory (no ``file``), made at its first use.
    private let memory = Mutex<DPoPKey?>(nil)

    /// The key file named after `fileName` (a token cache's, `tokens-<key>.json`, or a discovered sign-in's).
    package init(directory: StateDirectory, fileName: String) {
        let stem = fileName.hasSuffix(".json") ? String(fileName.dropLast(5)) : fileName
        file = StateFile(directory: directory, name: "dpop-" + stem + ".json")
    }

    /// A key kept in memory only.
    package init() {
        file = nil
    }

    /// The file's absolute path; nil for a key in memory.
    package var path: String? { file?.path }

    /// The sign-in's key: the one in the file, whatever its algorithm, or a new `algorithm` one written there under
    /// the lock when there is none (or the file did not decode — set aside by ``StateFile``). Read again on every
    /// call: token requests are rare, and a `logout` and `login` in another process may have replaced the key.
    package func key(creating algorithm: DPoPKey.Algorithm = .es256) throws(StateError) -> DPoPKey {
        guard let file else {
            return memory.withLock { kept in
                if let kept { return kept }
                let key = DPoPKey(algorithm: algorithm)
                kept = key
                return key
            }
        }
        if let stored = try file.load(), let key = Self.key(stored) { return key }
        return try file.update { (stored: inout Stored?) -> DPoPKey in
            if let existing = stored, let key = Self.key(existing) { return key }
            let key = DPoPKey(algorithm: algorithm)
            stored = Stored(
                version: 1, algorithm: algorithm.rawValue, privateKey: Base64URL.encode(key.rawRepresentation),
                thumbprint: key.thumbprint)
            return key
        }
    }

    /// The stored key, without creating one; nil when there is none (or it does not decode).
    package func storedKey() -> DPoPKey? {
        guard let file else { return memory.withLock { $0 } }
        return (try? file.load()).flatMap(Self.key)
    }

    /// The thumbprint of the stored key, without creating one (for `status`); nil when there is none.
    package func thumbprint() -> String? {
        guard let file else { return memory.withLock { $0?.thumbprint } }
        return (try? file.load())?.thumbprint
    }

    /// Deletes the key (`logout`): the next sign-in starts with a new one.
    package func remove() throws(StateError) {
        guard let file else {
            memory.withLock { $0 = nil }
            return
        }
        try file.update { (stored: inout Stored?) in stored = nil }
    }

    /// The key `stored` holds, when it decodes to the thumbprint written beside it; an algorithm this build does
    /// not know reads as no key.
    private static func key(_ stored: Stored) -> DPoPKey? {
        guard stored.version == 1, let algorithm = DPoPKey.Algorithm(rawValue: stored.algorithm ?? "ES256"),
            let raw = Base64URL.decode(stored.privateKey),
            let key = DPoPKey(algorithm: algorithm, rawRepresentation: raw), key.thumbprint == stored.thumbprint
        else { return nil }
        return key
    }
}

extension DPoPKeyFile: DPoPKeySource {
    /// The stored key, when it is the one `thumbprint` names; never a new one (a key not stored belongs to no
    /// token, and making one here would choose its algorithm without the server's metadata).
    package func proofKey(thumbprint: String) -> DPoPKey? {
        guard let key = storedKey(), key.thumbprint == thumbprint else { return nil }
        return key
    }
}
