import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The query of the request the browser makes to the loopback redirect URI (RFC 6749 §4.1.2): a code, or an error.
struct AuthorizationCallback: Sendable, Equatable {
    /// The request target as the browser sent it (path and query).
    package var target: String
    var parameters: [String: String]

    /// Parses the query of a request target (`/?code=…&state=…`); repeated names keep the first value.
    init(target: String) {
        self.target = target
        var parameters: [String: String] = [:]
        if let query = target.split(separator: "?", maxSplits: 1).dropFirst().first {
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = FormEncoding.decode(parts[0]), parameters[name] == nil else { continue }
                parameters[name] = parts.count > 1 ? FormEncoding.decode(parts[1]) ?? "" : ""
            }
        }
        self.parameters = parameters
    }

    var code: String? { parameters["code"] }
    package var state: String? { parameters["state"] }
    package var error: String? { parameters["error"] }
    var errorDescription: String? { parameters["error_description"] }

    /// Whether this looks like the provider's answer at all (a browser also asks for `/favicon.ico`).
    var isAnswer: Bool { code != nil || error != nil }
}
