import Foundation
import NIOCore

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

extension RawUpstream {
    /// Runs `body` with a raw upstream and a proxy whose route `/api` (scopes `api://api/Read`) points at its
    /// `/base`; the upstream answers every request `200` with its method and target as the body unless `answer`
    /// says otherwise.
    static func withProxy<T>(
        tls: Bool = false, route extra: String = "", timeouts: ProxyTimeouts = ProxyTimeouts(),
        answer: @escaping @Sendable (RawRequest) -> Answer = { .respond(status: 200, body: "\($0.method) \($0.uri)") },
        _ body: (ProxyHarness, RawUpstream) async throws -> T
    ) async throws -> T {
        try await RawUpstream.with(tls: tls, answer: answer) { upstream in
            try await ProxyHarness.with(routes: "[\(route(to: upstream, extra: extra))]", timeouts: timeouts) {
                try await body($0, upstream)
            }
        }
    }

    /// The `/api` route to `upstream`'s `/base` (with the fixture CA when it speaks TLS, or `caFile`).
    static func route(to upstream: RawUpstream, caFile: String = TLSFixtures.caFile, extra: String = "") -> String {
        var fields = [
            #""prefix": "/api""#, #""upstream": "\#(upstream.baseURL)/base""#, #""scopes": ["api://api/Read"]"#,
        ]
        if upstream.tls { fields.append(#""tls": { "caFile": "\#(caFile)" }"#) }
        if !extra.isEmpty { fields.append(extra) }
        return "{ " + fields.joined(separator: ", ") + " }"
    }
}

extension Array where Element == UInt8 {
    /// Whether `text`'s bytes occur in these bytes.
    func contains(text: String) -> Bool {
        let needle = Array(text.utf8)
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
