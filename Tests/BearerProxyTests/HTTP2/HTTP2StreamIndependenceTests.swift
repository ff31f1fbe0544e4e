import Foundation
import NIOCore
import NIOHTTP2
import Testing

@testable import BearerDataPlane

/// Flow control is per stream (RFC 9113 §5.2): a stream whose client reads nothing holds back its own upstream, and
/// only its own; the other streams of the same connection go on being answered.
@Suite("HTTP/2: a stalled stream stalls only itself")
struct HTTP2StreamIndependenceTests {
    @Test("1 GiB to a stream its client never reads: its upstream held back before 64 MiB, another stream answered")
    func stalledStreamAlone() async throws {
        let total = 1 << 30
        let bound = 64 << 20
        try await DownloadBackpressureTests.withFirehose(total: total) { bigPort, written in
            try await DownloadBackpressureTests.withFirehose(total: 4096) { smallPort, _ in
                let routes =
                    #"[{ "prefix": "/big", "upstream": "http://127.0.0.1:\#(bigPort)", "scopes": ["api://api/Read"] }, "#
                    + #"{ "prefix": "/small", "upstream": "http://127.0.0.1:\#(smallPort)", "scopes": ["api://api/Read"] }]"#
                try await ProxyHarness.with(routes: routes) { proxy in
                    try await HTTP2TestClient.with(port: proxy.port) { client in
                        let stalled = try await client.multiplexer.openStream { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try HTTP2TestClient.Stream(wrappingChannelSynchronously: channel)
                            }
                        }
                        try await stalled.executeThenClose { inbound, outbound in
                            try await outbound.write(
                                .headers(.init(headers: HTTP2TestClient.request("GET", "/big/x"), endStream: true)))
                            var frames = inbound.makeAsyncIterator()
                            guard case .headers(let head) = try await frames.next() else {
                                Issue.record("the big stream's first frame is not its head")
                                return
                            }
                            #expect(head.headers.first(name: ":status") == "200")
                            // Nothing more is read from this stream: its window is never opened again.
                            let sent = try await DownloadBackpressureTests.bytesWhenStalled(written, total: total)
                            #expect(sent > 0, "the upstream wrote nothing")
                            #expect(sent < bound, "the proxy took \(sent) bytes for a stream its client does not read")
                            // The same connection, another stream, while the first is stalled.
                            let other = try await client.send(HTTP2TestClient.request("GET", "/small/y"))
                            #expect(other.status == 200)
                            #expect(other.body.readableBytes == 4096)
                        }
                    }
                }
            }
        }
    }

    @Test("an upload to an upstream that reads nothing: its stream's window stops the client, the connection serves on")
    func stalledUploadAlone() async throws {
        let limit = 1 << 30
        let bound = 64 << 20
        try await UploadBackpressureTests.withDeafUpstream { deafPort in
            try await DownloadBackpressureTests.withFirehose(total: 4096) { smallPort, _ in
                let routes =
                    #"[{ "prefix": "/deaf", "upstream": "http://127.0.0.1:\#(deafPort)", "scopes": ["api://api/Read"] }, "#
                    + #"{ "prefix": "/small", "upstream": "http://127.0.0.1:\#(smallPort)", "scopes": ["api://api/Read"] }]"#
                try await ProxyHarness.with(routes: routes) { proxy in
                    let result = try await Python.run(
                        "h2_stalled_upload.py", [String(proxy.port), "/deaf/up", "/small/y", String(limit), "1"])
                    try #require(result.status == 0, "h2_stalled_upload.py failed: \(result.stderr)")
                    let report = try #require(
                        try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
                    let sent = try #require(report["sent"] as? Int)
                    // The proxy gives a stream's window back only as its exchange takes the DATA; the connection's
                    // as DATA arrives, so the stalled stream does not hold the connection's window.
                    #expect(report["stalled"] as? Bool == true, "the proxy kept giving window: \(sent) bytes taken")
                    #expect(sent > 0)
                    #expect(sent < bound, "the proxy took \(sent) bytes of an upload its upstream never read")
                    #expect(report["other_status"] as? Int == 200, "\(report)")
                    #expect(report["other_bytes"] as? Int == 4096, "\(report)")
                }
            }
        }
    }
}
