import Foundation
import Testing

@testable import BearerDataPlane

/// The access log records the status the client was sent: a client that closes once it has read an answer's head
/// (lftp, w3m and busybox wget do after a 200 or a 302) got that answer, and only one that left before any head
/// reached it is 499 (nginx's and Caddy's meaning).
@Suite("The access log says what the client was sent when it leaves mid-answer")
struct AccessLogStatusTests {
    /// An answer whose body never ends: the client can only leave mid-answer.
    static func endless(_ status: String) -> RawUpstream.Answer {
        .raw("HTTP/1.1 \(status)\r\nLocation: /elsewhere\r\nContent-Length: 1000000\r\n\r\nonly the start")
    }

    @Test(
        "a client that closes after the head is logged with the head's status; one that left before it, 499",
        arguments: [("/api/ok", "200"), ("/api/found", "302"), ("/api/held", "499")])
    func loggedStatus(uri: String, status: String) async throws {
        let logs = CapturingLogHandler.Store()
        try await RawUpstream.with { request in
            switch request.uri {
            case "/base/ok": Self.endless("200 OK")
            case "/base/found": Self.endless("302 Found")
            default: .held
            }
        } _: { upstream in
            try await ProxyHarness.with(
                routes: "[\(RawUpstream.route(to: upstream))]", logger: CapturingLogHandler.logger(into: logs)
            ) { proxy in
                let connection = try await TestConnection.open(port: proxy.port)
                if status == "499" {
                    // Leaves while the upstream has not answered: no head reached it.
                    async let sent = try? connection.send(uri: uri)
                    try await upstream.waitForRequests(1)
                    await connection.close()
                    _ = await sent
                } else {
                    let head = try await connection.abort(uri: uri, at: .afterResponseHead)
                    #expect(head?.status.code == UInt(status))
                }
                let line = try await Self.accessLine(in: logs)
                #expect(line.contains(#""status": \#(status)"#), "\(line)")
            }
        }
    }

    /// The access log's line for the one request, once the proxy has written it.
    static func accessLine(in logs: CapturingLogHandler.Store) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let line = logs.all.first(where: { $0.hasPrefix("info request ") }) { return line }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestSupportError.timedOut("no access log line", after: .seconds(20))
    }
}
