import Foundation
import Testing

/// ``ChildProcess/withListening(executable:_:environment:within:_:)``: the port a serve on port 0 was given, read from its
/// log, and a clear failure when the log never says.
@Suite("A serve on port 0: the bound port read back from its log")
struct ListeningPortTests {
    @Test(
        "the port of a `listening on http://` line, as either log format writes it; nil for any other line",
        arguments: [
            ("2026-01-02T03:04:05+0000 info bearer-proxy : listening on http://127.0.0.1:41234 (account: dev)", 41234),
            (#"{"label":"bearer-proxy","level":"info","message":"listening on http://127.0.0.1:5 (account: dev)"}"#, 5),
            ("listening on http://[::1]:8443 (account: dev)", 8443),
            ("listening on http://0.0.0.0:65535 (account: dev)", 65535),
            ("listening on unix:/tmp/p.sock (curl --unix-socket /tmp/p.sock http://localhost/…) (account: dev)", nil),
            ("warning bearer-proxy : listening on non-loopback address 0.0.0.0:0: allowRemote is set", nil),
            ("listening on http://127.0.0.1:0 (account: dev)", nil),
            ("listening on http://127.0.0.1 (account: dev)", nil),
            ("listening on http://[::1] (account: dev)", nil),
            ("listening on http://127.0.0.1:99999 (account: dev)", nil),
            ("route /api1 → http://127.0.0.1:8080/-/echo/api1", nil),
        ] as [(String, Int?)])
    func portOfLine(_ line: String, port: Int?) {
        #expect(ChildProcess.listeningPort(in: line) == port)
    }

    @Test(
        "a real serve on port 0, in text and in JSON log format: the body gets the port it answers on",
        arguments: ["text", "json"])
    func realServe(format: String) async throws {
        let (answer, output) = try await ChildProcess.withListening([
            "serve", "--config", CommandLineTests.repositoryRoot + "/routes.json", "--listen", "127.0.0.1:0",
            "--no-persist", "--log-format", format,
        ]) { port, serve in
            defer { serve.signal(SIGTERM) }
            return try await TestClient.send(port: port, uri: "/-/health").status
        }
        #expect(answer == .ok)
        #expect(output.status == 0, "\(output.stderr)")
    }

    @Test("a serve that exits before it listens: the error carries its stderr, and the body never runs")
    func exitsFirst() async throws {
        let error = await #expect(throws: ChildProcess.ListeningError.self) {
            _ = try await ChildProcess.withListening([
                "serve", "--config", "/nonexistent/routes.json", "--listen", "127.0.0.1:0",
            ]) { _, _ in Issue.record("the body ran") }
        }
        #expect(error?.description.contains("before it listened") == true, "\(error as Any)")
        #expect(error?.description.contains("/nonexistent/routes.json") == true, "\(error as Any)")
    }

    @Test("a child that never says where it listens: killed after the wait, the error carries what it said")
    func neverListens() async throws {
        let error = await #expect(throws: ChildProcess.ListeningError.self) {
            _ = try await ChildProcess.withListening(
                executable: "/bin/sh", ["-c", "echo starting up >&2; exec sleep 60"], within: .seconds(5)
            ) { _, _ in Issue.record("the body ran") }
        }
        #expect(error?.description.contains("said nothing of where it listens") == true, "\(error as Any)")
        #expect(error?.description.contains("starting up") == true, "\(error as Any)")
    }
}
