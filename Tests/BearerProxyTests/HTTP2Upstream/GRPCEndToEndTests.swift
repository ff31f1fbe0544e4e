import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerRuntime

/// gRPC end to end with grpcio on both sides (Tests/python/grpc_echo_server.py and grpc_calls.py), nobody here wrote
/// either: the client speaks HTTP/2 with prior knowledge to the proxy, the route speaks HTTP/2 to the server
/// (`"upstreamProtocol": "h2"`, or `auto` over TLS, where ALPN picks h2), and the server refuses any call without a
/// bearer token.
@Suite("gRPC end to end: grpcio client, proxy, grpcio server")
struct GRPCEndToEndTests {
    struct Outcome: Decodable {
        var kind: String
        var code: String
        var details: String
        var answers: [String]
        var trailers: [String: String]
    }

    @Test(
        "unary, server streaming, client streaming and bidirectional calls, their trailers, and a server's own status")
    func fourKinds() async throws {
        try await Self.fourKinds(tls: false, version: "h2")
    }

    @Test("the same over TLS with auto: ALPN picks h2, the fixture CA is trusted")
    func fourKindsOverTLS() async throws {
        try await Self.fourKinds(tls: true, version: "auto")
    }

    /// grpc_calls.py's calls through a route speaking `version` to grpc_echo_server.py, over TLS when `tls` (the
    /// fixture certificate, for 127.0.0.1).
    static func fourKinds(tls: Bool, version: String) async throws {
        let script = CommandLineTests.repositoryRoot + "/Tests/python/grpc_echo_server.py"
        let arguments =
            [script] + (tls ? ["--tls", TLSFixtures.serverCertificateFile, TLSFixtures.serverKeyFile] : [])
        _ = try await ChildProcess.withListening(executable: "/usr/bin/env", ["python3"] + arguments) {
            port, running in
            defer { running.signal(SIGKILL) }
            let ca = tls ? #", "tls": { "caFile": "\#(TLSFixtures.caFile)" }"# : ""
            let route =
                #"{ "prefix": "/pkg.Echo", "upstream": "\#(tls ? "https" : "http")://127.0.0.1:\#(port)", "#
                + #""scopes": ["api://echo/.default"], "upstreamProtocol": "\#(version)"\#(ca) }"#
            try await ProxyHarness.with(routes: "[\(route)]") { proxy in
                let result = try await Python.run("grpc_calls.py", [String(proxy.port), "pkg.Echo"])
                try #require(result.status == 0, "grpc_calls.py failed: \(result.stderr)")
                let outcomes = try result.stdout.split(separator: "\n").map {
                    try JSONDecoder().decode(Outcome.self, from: Data($0.utf8))
                }
                let byKind = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.kind, $0) })
                #expect(byKind["unary"]?.answers == ["unary:a"])
                #expect(byKind["server-stream"]?.answers == ["part0:b", "part1:b", "part2:b"])
                #expect(byKind["client-stream"]?.answers == ["count:4"])
                #expect(byKind["bidi"]?.answers == ["echo:x", "echo:y"])
                for kind in ["unary", "server-stream", "client-stream", "bidi"] {
                    #expect(byKind[kind]?.code == "OK", "\(kind): \(byKind[kind]?.details ?? "missing")")
                    // The server's trailers came through, and its token check passed: the route's token reached it.
                    #expect(byKind[kind]?.trailers["x-token-aud"] == "api://echo", "\(kind)")
                }
                // The server's own status and message (percent-encoded on the wire) reach the client unchanged.
                #expect(byKind["fail"]?.code == "NOT_FOUND")
                #expect(byKind["fail"]?.details == "no such thing: été")
            }
        }
    }
}
