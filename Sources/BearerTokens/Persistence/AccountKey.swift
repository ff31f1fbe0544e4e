import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// The account key: a stable, filesystem-safe name for one account of routes.json, used in the token cache's file
/// name (`tokens-<key>.json`).
///
/// It is derived from what identifies the account — flow, authority (or issuer), client id, user name — so that
/// two configs naming the same account share one cache, and changing any of them starts a fresh one.
///
/// The hash is FNV-1a, 128 bits, printed as 32 lowercase hex digits. The key is a name, not a security boundary:
/// its inputs are the user's own config, the directory is private to the user (0700), and an accidental collision
/// between the handful of accounts one user has is about n²/2¹²⁹. FNV-1a is three lines over the standard library's
/// `UInt128`, has published test vectors, and will never change underneath us — which matters more than
/// cryptographic strength, because a different key orphans every existing cache file.
public enum AccountKey {
    /// The key for an account. `authority` is the `authority` or the `issuer` of routes.json, whichever is set.
    ///
    /// Inputs are normalised first so that spellings of the same account agree: `authority` loses trailing
    /// slashes and is lowercased (its host is case-insensitive, and Microsoft tenant names are too), `clientId`
    /// (a GUID) and `username` (an email address, compared case-insensitively by every provider) are lowercased.
    /// `flow` is kept as is (it is one of a fixed set of names).
    public static func make(flow: String, authority: String?, clientId: String?, username: String?) -> String {
        let fields = [
            flow,
            authority.map { trimmingTrailingSlashes($0).lowercased() },
            clientId?.lowercased(),
            username?.lowercased(),
        ]
        return hex(fnv1a128(canonicalBytes(fields)))
    }

    /// Whether `key` can name a token cache file: 1 to 64 ASCII letters, digits, `-` or `_`. No dot, so that
    /// `tokens-<key>.json` and its temporary and set-aside siblings can never be confused with another key's.
    public static func isValid(_ key: String) -> Bool {
        guard (1...64).contains(key.utf8.count) else { return false }
        return key.utf8.allSatisfy(keyBytes.contains)
    }

    private static let keyBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)

    /// FNV-1a over `bytes` with the 128-bit offset basis and prime of the FNV specification
    /// (draft-eastlake-fnv, "FNV-1a", 128 bits).
    static func fnv1a128(_ bytes: [UInt8]) -> UInt128 {
        let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B
        var hash: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D
        for byte in bytes { hash = (hash ^ UInt128(byte)) &* prime }
        return hash
    }

    /// An unambiguous encoding of the fields: each is `-` when absent, else its UTF-8 length, `:` and its bytes;
    /// so no choice of field values can make two different tuples hash the same input.
    static func canonicalBytes(_ fields: [String?]) -> [UInt8] {
        var bytes: [UInt8] = Array("bearer-proxy account v1\n".utf8)
        for field in fields {
            if let field {
                bytes += Array("\(field.utf8.count):".utf8) + Array(field.utf8)
            } else {
                bytes.append(UInt8(ascii: "-"))
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    static func hex(_ value: UInt128) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }

    private static func trimmingTrailingSlashes(_ text: String) -> String {
        var text = Substring(text)
        while text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }
}
