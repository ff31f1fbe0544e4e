import Foundation

/// Plays the browser in the sign-in tests: opens a URL on 127.0.0.1 and follows redirects, as a browser would
/// from the identity provider's authorization endpoint to the loopback redirect URI. An https URL is visited over
/// TLS trusting the fixture CA (`TLSFixtures`), as a browser trusting that CA would.
enum TestBrowser {
    struct Visit: Sendable {
        /// Every URL requested, in order.
        var urls: [String]
        /// The last response (the page the person would see).
        var final: TestResponse
    }

    static func open(_ url: String, maximumRedirects: Int = 5) async throws -> Visit {
        var urls = [url]
        var current = url
        while true {
            // localhost is visited at 127.0.0.1 (the loopback listeners bind it; never a name lookup).
            guard let parsed = URL(string: current), let host = parsed.host, ["127.0.0.1", "localhost"].contains(host),
                let port = parsed.port
            else {
                throw TestSupportError.timedOut("the test browser only visits loopback: \(current)", after: .zero)
            }
            let tls = parsed.scheme == "https"
            let target = String(current.dropFirst("\(tls ? "https" : "http")://\(host):\(port)".count))
            let response = try await TestClient.send(port: port, uri: target.isEmpty ? "/" : target, tls: tls)
            guard (300..<400).contains(response.status.code), let location = response.headers.first(name: "location"),
                urls.count <= maximumRedirects
            else { return Visit(urls: urls, final: response) }
            urls.append(location)
            current = location
        }
    }
}
