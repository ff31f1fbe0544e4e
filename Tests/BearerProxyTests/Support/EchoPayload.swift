/// The JSON document `FakeUpstream`'s `.echo` behaviour answers with; decode it with `TestResponse.echo()`.
///
/// `{"method": "POST", "uri": "/raw/path?q", "version": "HTTP/1.1", "headers": [["Host", "..."], ...],
///   "bodyLength": 123, "bodySHA256": "<hex>"}` — headers in received order, names in received case.
struct EchoPayload: Codable, Sendable, Equatable {
    var method: String
    var uri: String
    var version: String
    var headers: [[String]]
    var bodyLength: Int
    var bodySHA256: String

    /// The first value of header `name` (case-insensitive), or nil.
    func header(_ name: String) -> String? {
        self.headers.first { $0.first?.lowercased() == name.lowercased() }.flatMap { $0.count > 1 ? $0[1] : nil }
    }

    /// Every value of header `name` (case-insensitive), in order.
    func headerValues(_ name: String) -> [String] {
        self.headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.count > 1 ? $0[1] : nil }
    }

    /// The header names in received order.
    var headerNames: [String] {
        self.headers.compactMap(\.first)
    }
}
