import BearerCodec
import BearerConfiguration

/// The caller's own token on an on-behalf-of route: the credential of its one `Authorization: Bearer` field (RFC 6750
/// §2.1), which the route exchanges and never forwards.
enum SubjectToken {
    /// The token, or nil when the request carries none to exchange: no `Authorization` field, more than one (which
    /// of them would be the caller's?), another scheme, or a credential that is not a token68 (RFC 9110 §11.2).
    static func of(_ request: ClientRequest) -> String? {
        of(authorization: request.values("authorization"))
    }

    static func of(authorization values: [String]) -> String? {
        guard values.count == 1, let value = values.first else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].drop { $0 == " " }
        guard !token.isEmpty, token.utf8.allSatisfy(isToken68), isPadded(token) else { return nil }
        return String(token)
    }

    /// `ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/"`, and `=` (only at the end: ``isPadded(_:)``).
    private static func isToken68(_ byte: UInt8) -> Bool {
        URICharacters.isAlpha(byte) || URICharacters.isDigit(byte) || "-._~+/=".utf8.contains(byte)
    }

    /// `=` only as trailing padding.
    private static func isPadded(_ token: Substring) -> Bool {
        guard let firstPad = token.firstIndex(of: "=") else { return true }
        return token[firstPad...].allSatisfy { $0 == "=" } && firstPad != token.startIndex
    }
}
