import NIOHTTP1
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

@Suite("End to end: bodies stream both ways")
struct StreamingTests {
    static let hundredMiB = 100 * 1024 * 1024

    @Test("100 MiB downloads arrive byte-identical, with Content-Length and chunked", arguments: [false, true])
    func download(chunked: Bool) async throws {
        try await ProxyHarness.with(upstream: { _ in .download(bytes: Self.hundredMiB, chunked: chunked) }) {
            proxy, _ in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/big")
            #expect(response.status == .ok)
            #expect(response.bodyLength == Self.hundredMiB)
            #expect(response.bodySHA256 == FakeUpstream.downloadSHA256(bytes: Self.hundredMiB))
            if chunked {
                #expect(response.header("transfer-encoding") == "chunked")
            } else {
                #expect(response.header("content-length") == String(Self.hundredMiB))
            }
        }
    }

    @Test("100 MiB uploads arrive byte-identical, chunked and with Content-Length", arguments: [false, true])
    func upload(chunked: Bool) async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let body = TestBody.stream(length: Self.hundredMiB, chunked: chunked)
            let response = try await TestClient.send(port: proxy.port, method: "PUT", uri: "/api/upload", body: body)
            #expect(response.status == .ok)
            let echo = try response.echo()
            #expect(echo.bodyLength == Self.hundredMiB)
            #expect(echo.bodySHA256 == body.sha256)
            #expect(echo.header("transfer-encoding") == (chunked ? "chunked" : nil))
            #expect(echo.header("content-length") == (chunked ? nil : String(Self.hundredMiB)))
            #expect(upstream.requests.last?.complete == true)
        }
    }

    @Test("an upload answered early (413) gives the client the 413, and the proxy keeps serving")
    func earlyAnswer() async throws {
        try await ProxyHarness.with(upstream: { head in
            head.method == "PUT" ? .rejectEarly(status: 413) : .echo
        }) { proxy, _ in
            let connection = try await TestConnection.open(port: proxy.port)
            let rejected = try await connection.send(
                method: "PUT", uri: "/api/too-big", body: .stream(length: 20 * 1024 * 1024, chunked: false))
            #expect(rejected.status.code == 413)
            // The same client connection goes on working once the rest of the body has been discarded.
            let next = try await connection.send(uri: "/api/after")
            #expect(next.status == .ok)
            #expect(try next.echo().uri == "/base/after")
            await connection.close()
            // And so does a new one.
            let fresh = try await TestClient.send(port: proxy.port, uri: "/api/fresh")
            #expect(fresh.status == .ok)
        }
    }

    @Test("server-sent events arrive as they are sent, not when the response ends")
    func serverSentEvents() async throws {
        let (events, send) = AsyncStream.makeStream(of: String.self)
        try await ProxyHarness.with(upstream: { _ in .events(events) }) { proxy, _ in
            let stream = try await TestClient.stream(
                port: proxy.port, uri: "/api/events", headers: [("Accept", "text/event-stream")])
            #expect(stream.status == .ok)
            #expect(stream.headers.first(name: "content-type") == "text/event-stream")
            var chunks = stream.chunks.makeAsyncIterator()
            for index in 1...3 {
                let event = "data: event \(index)\n\n"
                send.yield(event)
                // The next event is only sent after this one has arrived through the proxy.
                var received = ""
                while received.count < event.count, let chunk = try await chunks.next() {
                    received += String(decoding: chunk, as: UTF8.self)
                }
                #expect(received == event)
            }
            send.finish()
            #expect(try await chunks.next() == nil)
        }
    }

    @Test("Expect: 100-continue is relayed, then the body goes through")
    func expectContinue() async throws {
        try await ProxyHarness.with(upstream: { _ in .expectContinue }) { proxy, _ in
            let body = TestBody.stream(length: 1024 * 1024, chunked: false)
            let response = try await TestClient.send(
                port: proxy.port, method: "POST", uri: "/api/upload", headers: [("Expect", "100-continue")], body: body)
            #expect(response.informational.map(\.status) == [.continue])
            #expect(response.status == .ok)
            #expect(try response.echo().bodySHA256 == body.sha256)
        }
    }

    @Test("a client that goes away makes the proxy close its upstream connection")
    func clientAbort() async throws {
        try await ProxyHarness.with(upstream: { _ in .download(bytes: Self.hundredMiB, chunked: true) }) {
            proxy, upstream in
            let head = try await TestClient.abort(port: proxy.port, uri: "/api/big", at: .afterResponseBytes(65536))
            #expect(head?.status == .ok)
            try await upstream.waitForClosedConnections(1)
            #expect(upstream.openConnections == 0)
        }
    }
}
