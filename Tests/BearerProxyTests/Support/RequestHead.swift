import NIOHTTP1

/// A request head exactly as `FakeUpstream` received it: method, raw URI, version and headers in order.
struct RequestHead: Sendable {
    /// The method as sent, e.g. `"GET"`.
    var method: String
    /// The raw request target, byte for byte (no decoding, no normalisation): `"/v1/a%2Fb?x=1"`.
    var uri: String
    /// The request's HTTP version.
    var version: HTTPVersion
    /// Every header in received order, names in their received case.
    var headers: HTTPHeaders
    /// NIO's keep-alive verdict for this request (version default plus `Connection` header).
    var isKeepAlive: Bool

    init(_ head: HTTPRequestHead) {
        self.method = head.method.rawValue
        self.uri = head.uri
        self.version = head.version
        self.headers = head.headers
        self.isKeepAlive = head.isKeepAlive
    }

    /// The headers as ordered `(name, value)` pairs.
    var headerList: [(name: String, value: String)] {
        self.headers.map { ($0.name, $0.value) }
    }

    /// The first value of header `name` (case-insensitive), or nil.
    func header(_ name: String) -> String? {
        self.headers.first(name: name)
    }

    /// Every value of header `name` (case-insensitive), in order.
    func headerValues(_ name: String) -> [String] {
        self.headers[name]
    }

    /// `"HTTP/1.1"` style text of the version.
    var versionText: String {
        "HTTP/\(self.version.major).\(self.version.minor)"
    }
}
