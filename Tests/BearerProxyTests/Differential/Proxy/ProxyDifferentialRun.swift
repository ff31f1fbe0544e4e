import NIOCore

/// A client stream sent through the real proxy on real sockets, and the bytes its upstream received, for the three
/// references to frame again (issue #24 conditions 2 and 3).
///
/// Each input gets a proxy and a raw upstream of its own: once the proxy has shut down and the upstream has seen
/// every connection close, nothing the proxy forwards for the input can still be on its way, and nothing of one
/// input can land on a connection another input reuses from the pool. (The upstream answers with
/// `Connection: close` besides, so a connection carries one request.)
enum ProxyDifferentialRun {
    /// What happened to one input.
    struct Trip: Sendable {
        /// The client's stream, with this proxy's `host:port` in place of `{HOST}`.
        let input: DifferentialInput
        /// The bytes each upstream connection received, in the order the connections were accepted.
        let upstreamStreams: [[UInt8]]
        /// The statuses the client received, or why it got none.
        let answers: String
        /// The upstream's `host:port`, which the proxy must send as Host.
        let upstreamHost: String
    }

    /// The upstream's answer: a complete response that ends the upstream connection.
    static let answer: @Sendable (RawRequest) -> RawUpstream.Answer = { request in
        .respond(status: 200, headers: [("connection", "close")], body: "\(request.method) \(request.uri)")
    }

    /// Sends `template` (`{HOST}` for the proxy's `host:port`) as a client stream through a new proxy, configured
    /// with `configuration`'s top-level keys besides its route (`"allowedOrigins": [...]` for a browser's requests).
    static func trip(_ template: DifferentialInput, configuration: String = "") async throws -> Trip {
        try await RawUpstream.with(answer: answer) { upstream in
            let (input, answers) = try await ProxyHarness.with(
                routes: "[\(RawUpstream.route(to: upstream))]", extra: configuration
            ) { proxy in
                var input = template
                input.bytes = Latin1.bytes(
                    Latin1.string(input.bytes).replacing("{HOST}", with: "127.0.0.1:\(proxy.port)"))
                return (input, await send(input, to: proxy.port))
            }
            // The proxy has shut down: every connection it opened is closed or closing.
            let accepted = upstream.acceptedConnections
            try await upstream.waitForClosedConnections(accepted)
            return Trip(
                input: input, upstreamStreams: (0..<accepted).map { upstream.received(on: $0 + 1, .plain) },
                answers: answers, upstreamHost: "127.0.0.1:\(upstream.port)")
        }
    }

    /// Writes the stream and collects the answers. NIOHTTP1's verdict on the stream (the proxy's own parser) says
    /// how many answers come before the proxy waits for more bytes: one per message it frames, and one for the
    /// message it refuses. A stream that ends before any answer is due ends with the client's end of input.
    private static func send(_ input: DifferentialInput, to port: Int) async -> String {
        let nio = NIOStreamReference.requests(input)
        let expected = nio.messages.count + (nio.end == .error ? 1 : 0)
        do {
            let responses = try await TestClient.raw(
                port: port, pieces: input.pieces, endOfInput: expected == 0, expectedResponses: max(expected, 1),
                requestMethods: nio.messages.compactMap(\.method), timeout: .seconds(20))
            return responses.map { "\($0.status.code)" }.joined(separator: " ")
        } catch {
            // A reset after a refusal can cost the client the answer; the upstream's bytes are what is judged.
            return "no answer: \(error)"
        }
    }
}
