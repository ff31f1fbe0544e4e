/// A complete HTTP response the fake identity provider writes: status, headers (without framing; the handler adds
/// `content-length`) and body.
struct FakeIdentityResponse: FakeHTTPResponse, Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    /// A JSON response: `application/json; charset=utf-8`, `cache-control: no-store` and `pragma: no-cache`, as
    /// RFC 6749 §5.1 asks of token responses.
    static func json(status: Int = 200, _ object: [String: Any], headers: [(String, String)] = []) -> Self {
        Self(
            status: status,
            headers: [
                ("content-type", "application/json; charset=utf-8"), ("cache-control", "no-store"),
                ("pragma", "no-cache"),
            ] + headers,
            body: FakeIdentityJWT.json(object))
    }

    /// A response with a body as given (for `.raw` failures).
    static func raw(status: Int, headers: [(String, String)], body: String) -> Self {
        Self(status: status, headers: headers, body: Array(body.utf8))
    }
}
