import Crypto
import Foundation

/// JSON Web Token plumbing for `FakeIdentityProvider`: base64url, JSON the way the fake writes it, HS256 minting
/// of the fake's own tokens, and splitting a compact JWS into its parts (no verification).
enum FakeIdentityJWT {
    /// The fixed HS256 key behind every access and ID token the fake issues (test only; tests may verify with it).
    static let signingKey = SymmetricKey(data: Array("bearer-proxy FakeIdentityProvider HS256 key (test only)".utf8))
    /// The `kid` the fake's tokens carry.
    static let keyID = "fake-idp-hs256"

    /// A compact JWS split into its decoded parts. The JSON stays as bytes so the value is `Sendable`.
    struct Parts: Sendable {
        /// The decoded header JSON.
        var headerJSON: [UInt8]
        /// The decoded payload JSON.
        var claimsJSON: [UInt8]
        /// `base64url(header) + "." + base64url(payload)`: what the signature covers.
        var signingInput: [UInt8]
        /// The decoded signature.
        var signature: [UInt8]

        /// The header as a JSON object (nil if it is not one).
        var header: [String: Any]? { FakeIdentityJWT.object(self.headerJSON) }
        /// The payload as a JSON object (nil if it is not one).
        var claims: [String: Any]? { FakeIdentityJWT.object(self.claimsJSON) }
    }

    /// Unpadded base64url of `bytes`.
    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url (padded or not; plain base64's `+` and `/` are accepted too). Nil if it is not base64.
    static func decodeBase64URL(_ text: some StringProtocol) -> [UInt8]? {
        var base64 = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if base64.count % 4 == 1 { return nil }
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }

    /// JSON bytes of `object`: sorted keys, slashes unescaped. Values must be JSON-compatible.
    static func json(_ object: [String: Any]) -> [UInt8] {
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { [UInt8]($0) } ?? Array("{}".utf8)
    }

    /// Parses JSON bytes as an object (nil if they are not a JSON object).
    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    /// An HS256 JWT over `claims`, signed with `signingKey`.
    static func mint(claims: [String: Any]) -> String {
        let header: [String: Any] = ["alg": "HS256", "typ": "JWT", "kid": Self.keyID]
        let signingInput = Self.base64URL(Self.json(header)) + "." + Self.base64URL(Self.json(claims))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: Self.signingKey)
        return signingInput + "." + Self.base64URL(Array(mac))
    }

    /// Splits a compact JWS (three base64url segments) into its parts; nil if it is not one.
    static func split(_ token: String) -> Parts? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let header = Self.decodeBase64URL(segments[0]),
            let claims = Self.decodeBase64URL(segments[1]),
            let signature = Self.decodeBase64URL(segments[2])
        else { return nil }
        return Parts(
            headerJSON: header, claimsJSON: claims, signingInput: Array("\(segments[0]).\(segments[1])".utf8),
            signature: signature)
    }

}
