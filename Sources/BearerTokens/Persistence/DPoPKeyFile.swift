import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a sign-in's ``DPoPKey`` lives: `dpop-<name>.json` beside its token cache, a ``StateFile`` — 0600, atomic,
/// created under the state directory's lock — so every process of the machine proves possession of the same key and
/// a token (or refresh token) one of them obtained works in all (SPEC §7 "Sender-constrained tokens").
///
/// Without a state directory (`--no-persist`) the key lives in memory for the life of the process.
package final class DPoPKeyFile: Sendable {
    /// The file's contents: the private scalar, and the thumbprint so `status` can show it without the key.
    package struct Stored: Codable, Equatable, Sendable, CustomStringConvertible, CustomReflectable {
        package var version: Int
        /// base64url of the 32-byte P-256 private scalar.
        var privateKey: String
        package var thumbprint: String

        package var description: String { "DPoPKeyFile.Stored(<redacted>, jkt: \(thumbprint))" }
        package var customMirror: Mirror {
            Mirror(
                self, children: ["version": version, "privateKey": "<redacted>", "thumbprint": thumbprint],
                displayStyle: .struct)
        }
    }

    private let file: StateFile<Stored>?
    private let memory: DPoPKey?

    /// The key file named after `fileName` (a token cache's, `tokens-<key>.json`, or a discovered sign-in's).
    package init(directory: StateDirectory, fileName: String) {
        let stem = fileName.hasSuffix(".json") ? String(fileName.dropLast(5)) : fileName
        file = StateFile(directory: directory, name: "dpop-" + stem + ".json")
        memory = nil
    }

    /// A key kept in memory only.
    package init() {
        file = nil
        memory = DPoPKey()
    }

    /// The file's absolute path; nil for a key in memory.
    package var path: String? { file?.path }

    /// The sign-in's key: the one in the file, or a new one written there under the lock when there is none (or
    /// the file did not decode — set aside by ``StateFile``). Read again on every call: token requests are rare, and
    /// a `logout` and `login` in another process may have replaced the key.
    package func key() throws(StateError) -> DPoPKey {
        guard let file else { return memory! }
        if let stored = try file.load(), let key = Self.key(stored) { return key }
        return try file.update { (stored: inout Stored?) -> DPoPKey in
            if let existing = stored, let key = Self.key(existing) { return key }
            let key = DPoPKey()
            stored = Stored(
                version: 1, privateKey: Base64URL.encode(key.rawRepresentation), thumbprint: key.thumbprint)
            return key
        }
    }

    /// The stored key, without creating one; nil when there is none (or it does not decode).
    package func storedKey() -> DPoPKey? {
        guard let file else { return memory }
        return (try? file.load()).flatMap(Self.key)
    }

    /// The thumbprint of the stored key, without creating one (for `status`); nil when there is none.
    package func thumbprint() -> String? {
        guard let file else { return memory?.thumbprint }
        return (try? file.load())?.thumbprint
    }

    /// Deletes the key (`logout`): the next sign-in starts with a new one.
    package func remove() throws(StateError) {
        guard let file else { return }
        try file.update { (stored: inout Stored?) in stored = nil }
    }

    private static func key(_ stored: Stored) -> DPoPKey? {
        guard stored.version == 1, let raw = Base64URL.decode(stored.privateKey),
            let key = DPoPKey(rawRepresentation: raw), key.thumbprint == stored.thumbprint
        else { return nil }
        return key
    }
}

extension DPoPKeyFile: DPoPKeySource {
    /// The key, made the first time (the account's tokens are requested with it before any is bound).
    package func proofKey(thumbprint: String) -> DPoPKey? {
        guard let key = try? key(), key.thumbprint == thumbprint else { return nil }
        return key
    }
}
