import BearerJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// A file of its own although short: JOSE's encoding has no single owner — the bearer challenge here, `/-/echo`, and
// the token, assertion and PKCE code in `SignIn/` all use it.

/// Base64url without padding (RFC 4648 §5), as JOSE uses it (RFC 7515 §2).
package enum Base64URL {
    package static func encode<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
        Data(bytes).base64EncodedString()
            .replacing("+", with: "-")
            .replacing("/", with: "_")
            .replacing("=", with: "")
    }

    /// Appends base64url of `bytes`, without padding (RFC 7515 §2), to `out`: one pass over contiguous bytes and no
    /// intermediate copy, for what is encoded on every request (a DPoP proof's claims and signature).
    @inlinable
    package static func append(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            appendContiguous(UnsafeRawBufferPointer(buffer), to: &out)
        }
        if done == nil { Array(bytes).withUnsafeBytes { appendContiguous($0, to: &out) } }
    }

    /// ``append(_:to:)`` of bytes that lie in one piece.
    @usableFromInline
    static func appendContiguous(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + encodedCount(bytes.count))
        let alphabet = Self.alphabet
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            out.append(alphabet[Int(group >> 6 & 63)])
            out.append(alphabet[Int(group & 63)])
            index += 3
        }
        let left = bytes.count - index
        guard left > 0 else { return }
        let group = UInt32(bytes[index]) << 16 | (left == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
        out.append(alphabet[Int(group >> 18 & 63)])
        out.append(alphabet[Int(group >> 12 & 63)])
        if left == 2 { out.append(alphabet[Int(group >> 6 & 63)]) }
    }

    /// The number of characters ``append(_:to:)`` writes for `count` bytes.
    @usableFromInline
    package static func encodedCount(_ count: Int) -> Int {
        (count * 4 + 2) / 3
    }

    /// RFC 4648 §5.
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    package static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = String(text).replacing("-", with: "+").replacing("_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }
}
