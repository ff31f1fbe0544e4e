import BearerHTTP
import BearerJSON

/// `requireHeader`, globally or on a route (SPEC §9): requests to a route without this header — or, when a value is
/// given, without exactly that value — get 403 before any token is fetched.
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
}
