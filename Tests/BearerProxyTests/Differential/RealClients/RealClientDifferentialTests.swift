import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// No false refusals of real clients (issue #24 condition 4): requests that curl, wget, Python's requests, httpx,
/// aiohttp, urllib and websockets, Go's net/http, Node's fetch, Java's HttpClient, git and headless Chromium sent,
/// captured as bytes (`Fixtures/real-clients/`, `Tests/differential/clients/capture.sh`).
///
/// (a) All three references accept each capture whole, frame the requests the capture's recorder listed, and frame
/// it the same way however its reads are split. (b) Through the real proxy on real sockets, every request reaches
/// the upstream unchanged in meaning — the client's message less hop-by-hop fields, plus the proxy's own
/// (``ForwardedExpectation``) — and the client gets the upstream's answer; a WebSocket handshake goes up as a
/// handshake and, once the upstream switches, the client's frames go up byte for byte.
@Suite("Differential: real clients' requests, captured as bytes, through the three references and the proxy")
struct RealClientDifferentialTests {
    static let captures = RealClientCapture.all

    /// The clients condition 4 names, as the capture files' names begin.
    static let clients = [
        "curl", "wget", "python-requests", "python-httpx", "python-aiohttp", "python-urllib", "go-net-http",
        "node-fetch", "java-httpclient", "chromium", "git", "python-websockets",
    ]

    /// Random read splits each capture is also framed in.
    static let splitsPerCapture = 8

    /// The top-level `allowedOrigins` for the `Origin` fields of `messages`, or nothing when they have none: a
    /// browser's requests carry its page's origin, the recorder's, which the proxy must list (SPEC §9).
    static func allowing(originsOf messages: [FramedMessage]) -> String {
        let origins = Set(messages.flatMap(\.fields).map(\.normalized).filter { $0.name == "origin" }.map(\.value))
        guard !origins.isEmpty else { return "" }
        return #""allowedOrigins": ["# + origins.sorted().map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    }

    @Test("the corpus holds every client of condition 4, and every capture's requests are listed")
    func corpusIsComplete() {
        for client in Self.clients {
            #expect(Self.captures.contains { $0.name.hasPrefix(client + "-") }, "no capture of \(client)")
        }
        for capture in Self.captures {
            #expect(!capture.requests.isEmpty, "\(capture.name): no requests listed in requests.txt")
        }
    }

    @Test("all three references accept each capture whole and frame the requests the recorder listed")
    func referencesAcceptEveryCapture() async throws {
        let run = try await ReferenceRun.prepared()
        let whole = Self.captures.map(\.input)
        // The same streams in random pieces: a real client's writes reach a server in reads of any size.
        var mutator = StreamMutator(seed: 4, seeds: whole)
        let split = whole.flatMap { input in
            (0..<Self.splitsPerCapture).map { _ in input.read(splitAt: mutator.splits(of: input.bytes.count)) }
        }
        let comparisons = try await run.compare(whole + split)
        let expectation = ForwardedExpectation(upstreamHost: "")
        for (capture, comparison) in zip(Self.captures, comparisons) {
            #expect(comparison.agreement == .agree, "\(capture.name): \(comparison)")
            let framed = comparison.agreedMessages.map {
                RealClientCapture.ListedRequest(method: $0.method ?? "-", target: $0.target ?? "-")
            }
            #expect(framed == capture.requests, "\(capture.name): the references frame \(framed)")
            // Every byte is in a request, except a WebSocket client's frames after its handshake.
            let tunnel =
                comparison.agreedMessages.last.map(expectation.isWebSocketHandshake) == true
                ? capture.bytesAfterFirstHead : 0
            for (reference, verdict) in comparison.verdicts.sorted(by: { $0.key < $1.key }) {
                #expect(
                    [.clean, .close, .upgrade].contains(verdict.end) && (verdict.leftover ?? tunnel) == tunnel,
                    "\(capture.name): \(reference) \(verdict), \(tunnel) byte(s) of frames expected after it")
            }
        }
        for (index, input) in split.enumerated() {
            let unsplit = comparisons[index / Self.splitsPerCapture]
            let pieces = comparisons[whole.count + index]
            for reference in Reference.allCases {
                let (one, other) = (pieces.verdicts[reference]!, unsplit.verdicts[reference]!)
                #expect(
                    one.messages == other.messages && one.end == other.end,
                    "\(reference) frames \(input.name) differently when split at \(input.splits): \(one) vs \(other)")
            }
        }
        #expect(!Self.captures.isEmpty)
    }

    @Test("through the proxy on real sockets: every request is forwarded, unchanged in meaning")
    func everyRequestForwarded() async throws {
        let references = try await ReferenceRun.prepared()
        let clientComparisons = try await references.compare(Self.captures.map(\.input))
        var mutator = StreamMutator(seed: 24, seeds: Self.captures.map(\.input))
        var forwarded = 0
        for (capture, client) in zip(Self.captures, clientComparisons) {
            let configuration = Self.allowing(originsOf: client.agreedMessages)
            // Whole, and in random pieces: the proxy's reads may end anywhere, mid-head or mid-chunk.
            let pieces = capture.input.read(splitAt: mutator.splits(of: capture.bytes.count))
            for input in [capture.input, pieces] {
                let what = "\(capture.name) (written in \(input.pieces.count) piece(s) split at \(input.splits))"
                let trip = try await ProxyDifferentialRun.trip(input, configuration: configuration)
                let upstream = try await references.compare(
                    trip.upstreamStreams.map { DifferentialInput(family: "real client", name: "upstream", bytes: $0) })
                let verdict = ProxyVerdict(
                    trip: trip, client: client, upstream: upstream,
                    expectation: ForwardedExpectation(upstreamHost: trip.upstreamHost))
                for finding in verdict.findings { Issue.record("\(what): \(finding)") }
                #expect(
                    verdict.forwardedCount == capture.requests.count,
                    "\(what): \(verdict.forwardedCount) of \(capture.requests.count) request(s) forwarded; answers \(trip.answers)"
                )
                // The upstream answers each request 200; anything else the client got is the proxy's own refusal.
                #expect(
                    trip.answers == capture.requests.map { _ in "200" }.joined(separator: " "),
                    "\(what): answers \(trip.answers)")
                forwarded += verdict.forwardedCount
            }
        }
        print(
            "Real clients through the proxy: \(Self.captures.count) connections, each whole and in pieces; "
                + "\(forwarded) request(s) forwarded")
    }

    @Test("a WebSocket client's handshake goes up as a handshake; after the upstream's 101 its frames go up unchanged")
    func webSocketHandshakeBecomesATunnel() async throws {
        let references = try await ReferenceRun.prepared()
        let expectation = ForwardedExpectation(upstreamHost: "")
        let handshakes = Self.captures.compactMap { capture -> (RealClientCapture, FramedMessage)? in
            guard let first = NIOStreamReference.requests(capture.input).messages.first?.comparable,
                expectation.isWebSocketHandshake(first)
            else { return nil }
            return (capture, first)
        }
        try #require(!handshakes.isEmpty, "no WebSocket handshake in the corpus")
        for (capture, handshake) in handshakes {
            let frames = Array(capture.bytes.suffix(capture.bytesAfterFirstHead))
            let key = try #require(handshake.fields.first { $0.name == "sec-websocket-key" }?.value)
            let switching =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(WebSocketAccept.value(for: key))\r\n\r\n"
            try await RawUpstream.with(answer: { _ in .raw(switching) }) { upstream in
                try await ProxyHarness.with(
                    routes: "[\(RawUpstream.route(to: upstream))]", extra: Self.allowing(originsOf: [handshake])
                ) { proxy in
                    // As the client sent them: the handshake, and its frames once it had the 101 (RFC 6455 §4.1).
                    async let relayed = RawByteCapture.exchange(
                        port: proxy.port, bytes: Array(capture.bytes.dropLast(frames.count)), afterResponseHead: frames)
                    // The handshake as forwarded, then every byte of the client's frames.
                    try await upstream.state.wait(
                        for: "the handshake and \(frames.count) bytes of frames", timeout: TestLimits.wait
                    ) {
                        let received = $0.connections[1]?.bytes(.plain) ?? []
                        return RealClientCapture.headLength(received).map { received.count >= $0 + frames.count }
                            ?? false
                    }
                    let received = upstream.received(on: 1, .plain)
                    let head = try #require(RealClientCapture.headLength(received))
                    #expect(Array(received[head...]) == frames, "\(capture.name): the frames went up changed")
                    let forwarded = try #require(
                        try await references.compare([
                            DifferentialInput(family: "real client", name: "upstream", bytes: Array(received[..<head]))
                        ]).first)
                    #expect(forwarded.agreement == .agree, "\(capture.name): \(forwarded)")
                    let message = try #require(forwarded.agreedMessages.first)
                    #expect(expectation.isWebSocketHandshake(message), "\(capture.name): went up as \(message)")
                    let differences = ForwardedExpectation(upstreamHost: "127.0.0.1:\(upstream.port)")
                        .differences(client: handshake, forwarded: message)
                    #expect(differences.isEmpty, "\(capture.name): \(differences.joined(separator: "; "))")
                    // The upstream goes away: the proxy ends the tunnel, and the client has had the 101.
                    await upstream.closeOpenConnections()
                    let answer = try await relayed
                    #expect(
                        answer.starts(with: Array("HTTP/1.1 101 ".utf8)), "\(capture.name): \(Latin1.string(answer))")
                }
            }
        }
        // The corpus's WebSocket clients: Python's websockets, and Chromium's page (with its Origin).
        #expect(handshakes.count >= 2)
    }
}
