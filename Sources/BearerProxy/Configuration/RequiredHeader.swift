import NIOHTTP1

/// `requireHeader`, globally or on a route (#26 item 3): requests to a route without this header — or, when a value
/// is given, without exactly that value — get 403 before any token is fetched.
///
/// It stops software that can be made to send requests but cannot choose their headers: a local service made to
/// fetch a URL (SSRF), a browser's simple requests beyond the Origin check. It is not a secret — the client key is
/// for that — and it is forwarded upstream unchanged. (Vault Proxy's `require_request_header` is the model.)
public struct RequiredHeader: Sendable, Equatable {
    /// An RFC 9110 token; compared without case.
    public var name: String
    /// The exact value required; nil: any non-empty value.
    public var value: String?

    public init(name: String, value: String? = nil) {
        self.name = name
        self.value = value
    }

    /// Whether `headers` carry the header exactly once, non-empty, with the required value when there is one. Two
    /// fields of the name are refused: a check and a backend could each read another one.
    func isSatisfied(by headers: HTTPHeaders) -> Bool {
        var found: Substring?
        var count = 0
        for (name, value) in headers where name.utf8.count == self.name.utf8.count {
            guard name.lowercased() == self.name.lowercased() else { continue }
            count += 1
            found = Substring(value)
        }
        guard count == 1, let found, !found.isEmpty else { return false }
        guard let value else { return true }
        return Self.constantTimeEqual(Array(found.utf8), Array(value.utf8))
    }

    /// A comparison whose time does not depend on where the bytes first differ.
    private static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
