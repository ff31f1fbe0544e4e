/// An upstream response stream relayed by the real proxy to a client (issue #24 condition 3, the response side):
/// the upstream answers the client's one GET with the stream's bytes, and the client keeps every byte the proxy
/// writes back until the proxy closes (the client asked for `Connection: close`).
struct ResponseTrip: Sendable {
    /// The upstream's bytes.
    let input: DifferentialInput
    /// What the client received.
    let relayed: [UInt8]

    /// Runs `input` through a proxy and a raw upstream of its own. Only ASCII streams: the raw upstream writes text.
    static func relay(_ input: DifferentialInput) async throws -> ResponseTrip {
        let text = String(decoding: input.bytes, as: UTF8.self)
        return try await RawUpstream.with(answer: { _ in .raw(text) }) { upstream in
            try await ProxyHarness.with(routes: "[\(RawUpstream.route(to: upstream))]") { proxy in
                let request = "GET /api/r HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nConnection: close\r\n\r\n"
                let relayed = try await RawByteCapture.exchange(port: proxy.port, bytes: Array(request.utf8))
                return ResponseTrip(input: input, relayed: relayed)
            }
        }
    }

    /// Streams the proxy can relay without waiting on the upstream: ASCII, and complete by NIOHTTP1's own framing
    /// (a body delimited by the close would wait for a close the raw upstream never makes).
    static func relayable(_ input: DifferentialInput) -> Bool {
        input.bytes.allSatisfy { $0 < 0x80 } && NIOResponseReference.responses(input).end == .clean
            && !NIOResponseReference.responses(input).messages.isEmpty
    }
}
