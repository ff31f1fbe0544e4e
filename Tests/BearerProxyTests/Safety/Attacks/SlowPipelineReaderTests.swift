import Foundation
import Testing

/// A hostile client against the buffers each connection reuses for its heads (#24 session 17): many pipelined
/// requests, a 4 KiB receive window and slow reads, so that the proxy writes each next response head while the last
/// answer still waits in its send queue. A reused buffer that overwrote bytes still queued would show as an answer
/// with another request's id, path or status, or a body that is not its own.
@Suite("Security: a slow reader of pipelined answers gets each one whole, in its slot")
struct SlowPipelineReaderTests {
    @Test("60 pipelined requests of 64 KiB answers, read 1 KiB at a time: every head and body is its own")
    func slowReader() async throws {
        let count = 60
        let size = 64 * 1024
        try await ProxyHarness.with(upstream: { head in
            let index = Int(head.uri.split(separator: "/").last ?? "") ?? 0
            return .respond(
                status: 200, headers: [("x-path", head.uri)],
                body: [UInt8](repeating: UInt8(index % 251), count: size))
        }) { proxy, upstream in
            let result = try await Python.run("slow_pipelined_client.py", [String(proxy.port), String(count)])
            try #require(result.status == 0, "slow_pipelined_client.py failed: \(result.stderr)")
            let answers = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            #expect(answers.count == count)
            for (index, answer) in answers.enumerated() {
                #expect(answer["status"] as? Int == 200, "answer \(index): \(answer)")
                #expect(answer["id"] as? String == "r\(index)", "answer \(index): \(answer)")
                #expect(answer["path"] as? String == "/base/\(index)", "answer \(index): \(answer)")
                #expect(answer["length"] as? Int == size && answer["own"] as? Bool == true, "answer \(index)")
            }
            #expect(upstream.acceptedConnections == 1)
        }
    }
}
