import NIOHTTP1

/// A request to one of the proxy's own `/-/` endpoints, with its body already counted and hashed.
struct LocalRequest {
    var head: HTTPRequestHead
    var path: Substring
    var query: Substring?
    var bodyLength: Int
    var bodySHA256: String
}
