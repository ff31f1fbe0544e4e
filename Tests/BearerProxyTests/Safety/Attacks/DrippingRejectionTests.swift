import Foundation
import Synchronization
import Testing

@testable import BearerDataPlane

/// A hostile upstream refuses the token with a `401` the proxy may replay — so the proxy reads the `401` to its end
/// first — and never ends it, or makes it huge. The route's limit covers the whole exchange, the wait for the
/// rejection's end included: a `401` not complete within it, or larger than the replay buffer, is handled like any
/// `401` that cannot be replayed (here, on a bearer route: forwarded as it came). Nothing holds the client longer
/// than the route's limit.
@Suite("Attack: a 401 whose body drips forever, or is huge, cannot hold a request")
struct DrippingRejectionTests {
    static let challenge = "WWW-Authenticate: Bearer error=\"invalid_token\"\r\n"

    @Test("a chunked 401 that never ends is forwarded at the route's limit, with what was read of it")
    func drippingRejection() async throws {
        let answer = "HTTP/1.1 401 Unauthorized\r\n\(Self.challenge)Transfer-Encoding: chunked\r\n\r\n4\r\ndrip\r\n"
        try await RawUpstream.withProxy(
            route: #""timeoutSeconds": 3"#,
            answer: { $0.uri == "/base/x" ? .raw(answer) : .respond(status: 200) }
        ) { proxy, upstream in
            // The route's token first, so that the limit is spent on the rejection, not on a busy machine's signing.
            // A busy machine may answer 503 (no token within the limit); the token request goes on, so ask again.
            var tries = 1
            while try await TestClient.send(port: proxy.port, uri: "/api/warm").status != .ok, tries < 20 {
                tries += 1
            }
            let connection = try await TestConnection.open(port: proxy.port)
            // Without the bound nothing at all reaches the client: the inactivity limit throws.
            let head = try await connection.abort(uri: "/api/x", at: .afterResponseBytes(4), timeout: .seconds(20))
            #expect(head?.status == .unauthorized)
            // The upstream records a request before it answers it.
            #expect(upstream.requests.filter { $0.uri == "/base/x" }.count == 1, "replayed although it never ended")
        }
    }

    @Test("a 401 larger than the replay buffer is forwarded whole, not replayed")
    func largeRejection() async throws {
        let body = String(repeating: "r", count: ExchangeStateMachine.replayLimit * 2)
        let answer = "HTTP/1.1 401 Unauthorized\r\n\(Self.challenge)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        try await RawUpstream.withProxy(answer: { _ in .raw(answer) }) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
            #expect(response.status == .unauthorized)
            #expect(response.bodyText == body)
            #expect(upstream.requests.count == 1)
        }
    }

    @Test("a small 401 that ends in time is still replayed once with a new token")
    func rejectionStillReplayed() async throws {
        let rejection = "HTTP/1.1 401 Unauthorized\r\n\(Self.challenge)Content-Length: 6\r\n\r\nrefuse"
        let answered = AnswerCount()
        try await RawUpstream.withProxy(
            answer: { _ in
                let first = answered.count.withLock {
                    $0 += 1
                    return $0 == 1
                }
                return first ? .raw(rejection) : .respond(status: 200, body: "ok")
            }
        ) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
            #expect(response.status == .ok)
            #expect(upstream.requests.count == 2)
        }
    }
}

/// How many requests the upstream has answered.
private final class AnswerCount: Sendable {
    let count = Mutex(0)
}
