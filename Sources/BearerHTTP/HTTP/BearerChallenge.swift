import BearerJSON
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `Bearer` challenge from a resource server's `WWW-Authenticate` (RFC 6750 §3, syntax RFC 9110 §11.6.1), as far
/// as the proxy acts on it: the `error` code, for a claims challenge the decoded `claims` JSON, and for a
/// discovered route (SPEC §6.3) the `resource_metadata` URL (RFC 9728 §5.1) and the `scope` it asks for.
package struct BearerChallenge: Equatable {
    package var error: String?
    /// Base64-decoded `claims` (protocols.md §9), when the challenge carries one.
    package var claims: String?
    /// RFC 9728 §5.1: where the resource's metadata is, as sent (checked before it is used).
    package var resourceMetadata: String? = nil
    /// RFC 6750 §3: the space-separated scopes the resource asks for.
    package var scope: String? = nil

    /// The first `Bearer` challenge in `headers`, if any. Several challenges may share one field, and several
    /// fields may be sent; parameters come in any order.
    package static func find(in headers: HTTPHeaders) -> BearerChallenge? {
        all(in: headers).first
    }

    /// Every `Bearer` challenge in `headers` (or of another `scheme` that takes the same parameters, lowercase:
    /// `dpop`, RFC 9449 §7.1), in order, across fields and within each.
    package static func all(in headers: HTTPHeaders, scheme: String = "bearer") -> [BearerChallenge] {
        // Raw values: `canonicalForm` would split on the commas between parameters.
        headers["www-authenticate"].flatMap { field in
            parse(field).filter { $0.scheme.lowercased() == scheme }.map { challenge in
                BearerChallenge(
                    error: challenge.parameters["error"], claims: challenge.parameters["claims"].flatMap(decodeClaims),
                    resourceMetadata: challenge.parameters["resource_metadata"], scope: challenge.parameters["scope"])
            }
        }
    }

    /// Splits a `WWW-Authenticate` value into challenges: `scheme` then `name=value` pairs (token or
    /// quoted-string), separated by commas. A new challenge starts at a bare token not followed by `=`.
    package static func parse(_ field: String) -> [(scheme: String, parameters: [String: String])] {
        var challenges: [(scheme: String, parameters: [String: String])] = []
        var index = field.startIndex
        func skip(_ characters: Set<Character>) {
            while index < field.endIndex, characters.contains(field[index]) { index = field.index(after: index) }
        }
        func token() -> String {
            let start = index
            while index < field.endIndex, !" \t,=\"".contains(field[index]) { index = field.index(after: index) }
            return String(field[start..<index])
        }
        while index < field.endIndex {
            skip([" ", "\t", ","])
            let name = token()
            guard !name.isEmpty else {
                if index < field.endIndex { index = field.index(after: index) }
                continue
            }
            skip([" ", "\t"])
            if index < field.endIndex, field[index] == "=" {
                index = field.index(after: index)
                skip([" ", "\t"])
                var value = ""
                if index < field.endIndex, field[index] == "\"" {
                    index = field.index(after: index)
                    while index < field.endIndex, field[index] != "\"" {
                        if field[index] == "\\" { index = field.index(after: index) }
                        if index < field.endIndex { value.append(field[index]) }
                        if index < field.endIndex { index = field.index(after: index) }
                    }
                    if index < field.endIndex { index = field.index(after: index) }
                } else {
                    value = token()
                    // token68 padding (`abc==`) belongs to the value.
                    while index < field.endIndex, field[index] == "=" {
                        value.append("=")
                        index = field.index(after: index)
                    }
                }
                if !challenges.isEmpty { challenges[challenges.count - 1].parameters[name.lowercased()] = value }
            } else {
                challenges.append((scheme: name, parameters: [:]))
            }
        }
        return challenges
    }

    private static func decodeClaims(_ value: String) -> String? {
        if let data = Data(base64Encoded: value) ?? Base64URL.decode(value) {
            let text = String(decoding: data, as: UTF8.self)
            if text.hasPrefix("{") { return text }
        }
        return value.hasPrefix("{") ? value : nil
    }

    package init(error: String? = nil, claims: String? = nil, resourceMetadata: String? = nil, scope: String? = nil) {
        self.error = error
        self.claims = claims
        self.resourceMetadata = resourceMetadata
        self.scope = scope
    }
}

/// `Authorization: Bearer <token>` (RFC 6750 §2.1), the request side of ``BearerChallenge``, taken apart in one
/// place: the client key check and the `/-/echo` mirror read it the same way.
package enum BearerCredentials {
    /// The token of a `Bearer <token>` value (the scheme is case-insensitive, RFC 9110 §11.1); nil for any other.
    package static func token(in value: String) -> Substring? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1]
    }
}
