import NIOHTTP1

extension HTTPMethod {
    /// The method as the client wrote it. NIOHTTP1 names every method llhttp knows, and one name is not its token:
    /// `M-SEARCH` arrives as `.MSEARCH`, whose `rawValue` — what its encoder writes — is `MSEARCH`. A proxy
    /// forwards the method token exactly as received or refuses it (RFC 9110 §9.1), so the exchange carries `M-SEARCH`
    /// from the start: the route's `methods`, the access log and the upstream all see the token the client sent. Every
    /// other case's `rawValue` is its token (checked by `MethodTokenTests` against each method llhttp parses).
    var asReceived: HTTPMethod {
        self == .MSEARCH ? .RAW(value: "M-SEARCH") : self
    }
}
