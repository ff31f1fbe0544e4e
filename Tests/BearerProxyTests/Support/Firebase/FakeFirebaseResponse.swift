/// A complete HTTP response `FakeFirebase` writes: status, headers (without framing; the handler adds
/// `content-length`) and body.
struct FakeFirebaseResponse: FakeHTTPResponse, Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    /// A JSON response (`application/json; charset=UTF-8`, as Google sends it), keys sorted.
    static func json(status: Int = 200, _ object: [String: Any], headers: [(String, String)] = []) -> Self {
        Self(
            status: status,
            headers: [("content-type", "application/json; charset=UTF-8"), ("cache-control", "no-store")] + headers,
            body: FakeIdentityJWT.json(object))
    }

    /// An HTML page.
    static func html(status: Int, _ text: String, headers: [(String, String)] = []) -> Self {
        Self(status: status, headers: [("content-type", "text/html; charset=utf-8")] + headers, body: Array(text.utf8))
    }

    /// `302 Found` to `location`.
    static func redirect(to location: String) -> Self {
        self.html(
            status: 302, "<html><body>Redirecting…</body></html>",
            headers: [("location", location), ("cache-control", "no-store")])
    }
}
