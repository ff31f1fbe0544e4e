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

    package static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = String(text).replacing("-", with: "+").replacing("_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }
}
