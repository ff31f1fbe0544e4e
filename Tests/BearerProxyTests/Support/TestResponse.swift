import Foundation
import NIOHTTP1

/// A complete response received by `TestClient` / `TestConnection`.
///
/// `body` keeps only the first `TestResponse.bodyCap` (1 MiB) bytes; `bodyLength` and `bodySHA256` always cover
/// the whole body as it streamed in.
struct TestResponse: Sendable {
    /// How many leading body bytes `body` keeps.
    static let bodyCap = 1 << 20

    /// The final response head.
    var head: HTTPResponseHead
    /// The first `bodyCap` body bytes.
    var body: [UInt8]
    /// The full body length.
    var bodyLength: Int
    /// Lower-case hex SHA-256 of the full body.
    var bodySHA256: String
    /// The 1xx heads received before the final head (e.g. `100 Continue`), in order.
    var informational: [HTTPResponseHead]
    /// Trailers, if the chunked body carried any.
    var trailers: HTTPHeaders?
    /// Whether the whole request body was written. False when the server answered early and the client stopped
    /// (`Expect: 100-continue` answered with a final status, a `connection: close` answer, or the connection closed
    /// mid-upload).
    var requestBodyFullySent: Bool

    /// The status (`.ok`, `.notFound`, ...); compare codes with `status.code`.
    var status: HTTPResponseStatus { self.head.status }
    /// The response headers, in received order.
    var headers: HTTPHeaders { self.head.headers }
    /// The response version.
    var version: HTTPVersion { self.head.version }
    /// `body` as UTF-8 text.
    var bodyText: String { String(decoding: self.body, as: UTF8.self) }

    /// The first value of header `name` (case-insensitive), or nil.
    func header(_ name: String) -> String? {
        self.head.headers.first(name: name)
    }

    /// Decodes the body as `FakeUpstream`'s `.echo` document.
    func echo() throws -> EchoPayload {
        try JSONDecoder().decode(EchoPayload.self, from: Data(self.body))
    }

    /// Parses the body as a JSON object (e.g. a problem+json document).
    func jsonObject() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(self.body))
        guard let dictionary = object as? [String: Any] else {
            throw DecodingError.typeMismatch(
                [String: Any].self,
                .init(codingPath: [], debugDescription: "body is not a JSON object: \(self.bodyText.prefix(200))"))
        }
        return dictionary
    }

    /// The `detail` of a problem+json body.
    func problemDetail() throws -> String {
        guard let detail = try jsonObject()["detail"] as? String else {
            throw DecodingError.valueNotFound(
                String.self, .init(codingPath: [], debugDescription: "no detail: \(self.bodyText.prefix(200))"))
        }
        return detail
    }
}
