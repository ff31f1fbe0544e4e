import Foundation
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

/// What the proxy does when the upstream side turns hostile or the configuration changes under an exchange
/// (SPEC §8, §9): an `https` upstream is never contacted without TLS, an exchange keeps the configuration it began
/// with, and a request is replayed only when it provably never reached a response.
@Suite("Security: TLS across a reload, and replays only of requests that got no answer")
struct UpstreamTrustTests {
    /// The TLS record type of a handshake (RFC 8446 §5.1): a ClientHello starts with it; `GET ` does not.
    static func startsWithTLSHandshake(_ bytes: [UInt8]) -> Bool { bytes.first == 0x16 }

    /// Writes a configuration whose `/api` route trusts `caFile` to reach `upstream`, to `file`.
    static func writeConfiguration(to file: URL, upstream: RawUpstream, caFile: String) throws {
        let json = """
            { "listen": "127.0.0.1:0", "account": { "flow": "dev" },
              "routes": [ \(RawUpstream.route(to: upstream, caFile: caFile)) ] }
            """
        try Data(json.utf8).write(to: file)
    }

    /// Copies the fixture CA to `name` in `directory`: the same trust, another file — a new TLS context on reload.
    static func copyOfCA(in directory: URL, name: String) throws -> String {
        let copy = directory.appendingPathComponent(name)
        try FileManager.default.copyItem(at: URL(fileURLWithPath: TLSFixtures.caFile), to: copy)
        return copy.path
    }

    @Test(
        "a request replayed after a reload that changed caFile goes over TLS with the exchange's configuration",
        arguments: ["401 invalid_token", "pooled connection closed"])
    func replayAfterReloadStaysTLS(trigger: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bp-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let firstCA = try Self.copyOfCA(in: directory, name: "ca-1.pem")
        let secondCA = try Self.copyOfCA(in: directory, name: "ca-2.pem")
        try await RawUpstream.with(
            tls: true,
            answer: { request in
                // Held on the first connection; the replay, on a new one, is answered.
                request.uri.hasSuffix("/held") && request.connection == 1
                    ? .held : .respond(status: 200, body: "\(request.method) \(request.uri)")
            }
        ) { upstream in
            let file = directory.appendingPathComponent("routes.json")
            try Self.writeConfiguration(to: file, upstream: upstream, caFile: firstCA)
            let configuration = try Configuration.load(path: file.path, environment: [:])
            let proxy = try await RunningProxy.start(
                configuration: configuration, stateDirectory: nil, threads: 1, logger: ProxyHarness.silentLogger)
            do {
                try await replay(through: proxy, upstream: upstream, trigger: trigger) {
                    // The request is in flight; now the route's caFile changes (same CA, another file).
                    try Self.writeConfiguration(to: file, upstream: upstream, caFile: secondCA)
                    #expect(await proxy.reload(from: file.path) == .applied(accountChanged: false))
                }
            } catch {
                try? await proxy.shutdownWithinLimit()
                throw error
            }
            try await proxy.shutdownWithinLimit()
        }
    }

    /// Sends a request that the upstream holds, runs `meanwhile`, then lets the upstream answer so that the proxy
    /// replays it — after `401 invalid_token` on a connection that closes, or because its pooled connection closed
    /// without a byte — and checks that every connection the upstream saw began with a TLS handshake.
    private func replay(
        through proxy: RunningProxy, upstream: RawUpstream, trigger: String, meanwhile: () async throws -> Void
    ) async throws {
        let client = try await TestConnection.open(port: proxy.server.port)
        let pooled = trigger == "pooled connection closed"
        // A pooled connection for the held request to go out on.
        if pooled { #expect(try await client.send(uri: "/api/warm").status == .ok) }
        async let answer = client.send(uri: "/api/held")
        try await upstream.waitForRequests(pooled ? 2 : 1)
        try await meanwhile()
        let rejected: RawUpstream.Answer = .respond(
            status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#), ("Connection", "close")],
            body: "expired")
        upstream.release(with: pooled ? .close : rejected)
        let response = try await answer
        await client.close()
        #expect(response.status == .ok)
        #expect(response.bodyText == "GET /base/held")
        #expect(upstream.requests.filter { $0.uri == "/base/held" }.count == 2, "the request was not replayed once")
        #expect(upstream.acceptedConnections == 2)
        for connection in 1...upstream.acceptedConnections {
            #expect(
                Self.startsWithTLSHandshake(upstream.received(on: connection, .wire)),
                "connection \(connection) did not start with a TLS handshake")
        }
    }

    @Test("after a reload that changed caFile, a new request does not reuse a connection verified under the old one")
    func poolIsPerGeneration() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bp-pool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let firstCA = try Self.copyOfCA(in: directory, name: "ca-1.pem")
        let secondCA = try Self.copyOfCA(in: directory, name: "ca-2.pem")
        try await RawUpstream.with(tls: true, answer: { .respond(status: 200, body: $0.uri) }) { upstream in
            let file = directory.appendingPathComponent("routes.json")
            try Self.writeConfiguration(to: file, upstream: upstream, caFile: firstCA)
            let proxy = try await RunningProxy.start(
                configuration: try Configuration.load(path: file.path, environment: [:]), stateDirectory: nil,
                threads: 1, logger: ProxyHarness.silentLogger)
            do {
                let client = try await TestConnection.open(port: proxy.server.port)
                #expect(try await client.send(uri: "/api/before").status == .ok)
                #expect(try await client.send(uri: "/api/same").status == .ok)  // reuses the pooled connection
                try Self.writeConfiguration(to: file, upstream: upstream, caFile: secondCA)
                #expect(await proxy.reload(from: file.path) == .applied(accountChanged: false))
                #expect(try await client.send(uri: "/api/after").status == .ok)
                await client.close()
                let connections = Dictionary(uniqueKeysWithValues: upstream.requests.map { ($0.uri, $0.connection) })
                #expect(connections["/base/same"] == connections["/base/before"])
                #expect(connections["/base/after"] != connections["/base/before"], "an old-trust connection was reused")
            } catch {
                try? await proxy.shutdownWithinLimit()
                throw error
            }
            try await proxy.shutdownWithinLimit()
        }
    }

    @Test(
        "an invalid, partial or reset answer on a reused connection is never replayed: 502, one request upstream",
        arguments: [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Le", "HTTP/1.1 2", "garbage\r\n\r\n",
        ])
    func invalidAnswerIsNotReplayed(raw: String) async throws {
        try await RawUpstream.withProxy(answer: { request in
            request.uri.hasSuffix("/once") ? .raw(raw) : .respond(status: 200, body: "ok")
        }) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            #expect(try await client.send(uri: "/api/warm").status == .ok)
            // An idempotent, bodiless request on the reused connection: the kind a stale connection replays.
            async let answer = client.send(method: "DELETE", uri: "/api/once")
            try await upstream.waitForRequests(2)
            // A partial answer followed by the upstream going away.
            let partial = upstream.requests.count
            await upstream.closeOpenConnections()
            let response = try await answer
            await client.close()
            #expect(response.status == .badGateway)
            #expect(upstream.requests.filter { $0.uri == "/base/once" }.count == 1, "the request ran twice")
            #expect(partial == 2)
        }
    }

    @Test(
        "a response with a transfer coding besides chunked is refused (502), never relayed with the coding dropped",
        arguments: [
            "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
            "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
            "Transfer-Encoding: chunked, gzip\r\nConnection: close\r\n\r\nhi",
            "Transfer-Encoding: x-custom, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
        ])
    func transferCodingsBesidesChunked(fields: String) async throws {
        try await RawUpstream.withProxy(answer: { request in
            request.uri.hasSuffix("/coded") ? .raw("HTTP/1.1 200 OK\r\n" + fields) : .respond(status: 200, body: "ok")
        }) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            let response = try await client.send(uri: "/api/coded")
            // The client is told the upstream's answer is not one the proxy can pass on, and the same client
            // connection still works, on a new upstream connection: the refused one is not pooled.
            #expect(response.status == .badGateway)
            #expect(response.header("content-type") == "application/problem+json")
            #expect(try await client.send(uri: "/api/after").status == .ok)
            await client.close()
            #expect(upstream.requests.filter { $0.uri == "/base/coded" }.count == 1, "the request ran twice")
        }
    }

    @Test(
        "a status outside 100–599 is refused (502), never relayed as a status line no parser reads",
        arguments: ["004 No Content", "000 Zero", "099 Low", "600 High", "999 High"])
    func statusOutOfRange(statusLine: String) async throws {
        try await RawUpstream.withProxy(answer: { _ in .raw("HTTP/1.1 \(statusLine)\r\nContent-Length: 0\r\n\r\n") }) {
            proxy, _ in
            let responses = try await TestClient.raw(
                port: proxy.port, text: "GET /api/s HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n",
                expectedResponses: 1)
            #expect(responses.map(\.status.code) == [502], "\(statusLine)")
            #expect(responses.first?.header("content-type") == "application/problem+json")
        }
    }

    @Test("trailer fields that may never be trailers are dropped: Host and the hop-by-hop ones; the rest relayed")
    func trailersThatMayNotBeTrailers() async throws {
        let answer =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n"
            + "Host: evil.example\r\nConnection: close\r\nTE: trailers\r\nX-Sum: 1\r\n\r\n"
        try await RawUpstream.withProxy(answer: { _ in .raw(answer) }) { proxy, _ in
            let responses = try await TestClient.raw(
                port: proxy.port, text: "GET /api/t HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n",
                expectedResponses: 1)
            let response = try #require(responses.first)
            #expect(response.status == .ok)
            #expect(response.bodyText == "hi")
            // A recipient would read them as a second header section (RFC 9110 §6.5.1).
            #expect(response.trailers.map { $0.map { "\($0.name): \($0.value)" } } == ["X-Sum: 1"])
        }
    }

    @Test(
        "a framing field in the upstream's trailers cuts the response off: the client never sees it end",
        arguments: ["Transfer-Encoding: identity", "Content-Length: 5"])
    func framingTrailerEndsTheResponse(trailer: String) async throws {
        // h11 refuses such a response outright (the long differential run of session 13, seed 41), so the codec
        // does: the head and the data already went on, and the client's connection closes without the last chunk.
        let answer =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\(trailer)\r\nX-Sum: 1\r\n\r\n"
        try await RawUpstream.withProxy(answer: { _ in .raw(answer) }) { proxy, _ in
            let responses = try await TestClient.raw(
                port: proxy.port, text: "GET /api/t HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n",
                expectedResponses: 1)
            #expect(responses.isEmpty)
        }
    }

    @Test("a reused connection closed before any answer byte is still replayed, once (idempotent, bodiless)")
    func staleConnectionIsReplayed() async throws {
        try await RawUpstream.withProxy(answer: { request in
            request.uri.hasSuffix("/once") && request.connection == 1 ? .close : .respond(status: 200, body: "ok")
        }) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            #expect(try await client.send(uri: "/api/warm").status == .ok)
            let response = try await client.send(uri: "/api/once")
            await client.close()
            #expect(response.status == .ok)
            #expect(upstream.requests.filter { $0.uri == "/base/once" }.map(\.connection) == [1, 2])
        }
    }
}
