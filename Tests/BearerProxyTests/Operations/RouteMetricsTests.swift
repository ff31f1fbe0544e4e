import NIOEmbedded
import Testing

@testable import BearerDataPlane
@testable import BearerTelemetry

/// The per-loop metric handles remember the route and the series used last (#24 session 18): requests that
/// alternate between routes, methods and status classes must still each count in their own series.
@Suite("Route metrics: the handles used last, never another series'")
struct RouteMetricsTests {
    /// The value of the one `bearer_proxy_requests_total` line with these labels in `text`.
    static func requests(_ text: String, route: String, method: String, statusClass: String) -> Double? {
        let lines = text.split(separator: "\n").filter {
            $0.hasPrefix("bearer_proxy_requests_total{") && $0.contains("route=\"\(route)\"")
                && $0.contains("method=\"\(method)\"") && $0.contains("status_class=\"\(statusClass)\"")
        }
        guard lines.count == 1, let value = lines[0].split(separator: " ").last else { return nil }
        return Double(value)
    }

    @Test("alternating routes, methods and status classes: each request counted in its own series")
    func alternating() {
        let metrics = ProxyMetrics()
        let loop = EventLoopState(eventLoop: EmbeddedEventLoop())
        let sequence: [(String, String, UInt)] = [
            ("/a", "GET", 200), ("/a", "GET", 204), ("/b", "GET", 200), ("/a", "POST", 201), ("/a", "GET", 404),
            ("/a", "GET", 200), ("/b", "GET", 500), ("/b", "GET", 200), ("/a", "GET", 200),
        ]
        for (route, method, status) in sequence {
            loop.metrics(for: route, in: metrics).record(
                method: method, status: status, bytesIn: 0, bytesOut: 0, upstream: nil)
        }
        let text = String(decoding: metrics.render(), as: UTF8.self)
        #expect(Self.requests(text, route: "/a", method: "GET", statusClass: "2xx") == 4)
        #expect(Self.requests(text, route: "/a", method: "GET", statusClass: "4xx") == 1)
        #expect(Self.requests(text, route: "/a", method: "POST", statusClass: "2xx") == 1)
        #expect(Self.requests(text, route: "/b", method: "GET", statusClass: "2xx") == 2)
        #expect(Self.requests(text, route: "/b", method: "GET", statusClass: "5xx") == 1)
        #expect(loop.metrics(for: "/a", in: metrics) === loop.metrics(for: "/a", in: metrics))
        #expect(loop.metrics(for: "/a", in: metrics) !== loop.metrics(for: "/b", in: metrics))
        #expect(loop.requestCounts == ["/a": 6, "/b": 3])
    }
}
