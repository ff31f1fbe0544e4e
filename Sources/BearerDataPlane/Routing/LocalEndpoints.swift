import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// The proxy's own endpoints under the reserved prefix `/-/` (SPEC §9), as the data plane sees them: it recognises
/// their paths, collects the request and asks for the answer. `Admin/` implements it (``AdminEndpoints``) and
/// `Runtime/` passes it in, so the data plane never depends on Admin, Operations or SignIn.
package protocol LocalEndpoints: Sendable {
    /// The answer to `request`, whose path ``LocalEndpointPaths/owns(_:)``.
    func response(to request: LocalRequest) -> LocalAnswer
}

/// An answer now, or one that needs to wait (for a token request, or for counts from every event loop).
package enum LocalAnswer {
    case now(LocalResponse)
    case later(@Sendable () async -> LocalResponse)
    case refused(ProxyError)
}

/// A request to one of the proxy's own `/-/` endpoints, with its body already counted and hashed.
package struct LocalRequest {
    package var head: HTTPRequestHead
    package var path: Substring
    package var query: Substring?
    package var bodyLength: Int
    package var bodySHA256: String

    package init(head: HTTPRequestHead, path: Substring, query: Substring? = nil, bodyLength: Int, bodySHA256: String) {
        self.head = head
        self.path = path
        self.query = query
        self.bodyLength = bodyLength
        self.bodySHA256 = bodySHA256
    }
}

/// The reserved paths: `/-` and everything under `/-/`; `routes.json` cannot route them.
package enum LocalEndpointPaths {
    /// The reserved prefix.
    package static let prefix = "/-/"

    /// Whether `path` belongs to the proxy rather than to a route.
    package static func owns(_ path: Substring) -> Bool {
        // On UTF-8 bytes: this runs for every request, and Substring's hasPrefix compares Characters.
        let bytes = path.utf8
        guard bytes.count >= 2, bytes.starts(with: "/-".utf8) else { return false }
        return bytes.count == 2 || bytes[bytes.index(bytes.startIndex, offsetBy: 2)] == UInt8(ascii: "/")
    }
}
