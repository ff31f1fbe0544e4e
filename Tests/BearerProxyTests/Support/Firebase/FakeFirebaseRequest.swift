import Foundation
import NIOHTTP1

/// One request as `FakeFirebaseHandler` collected it, with the views the endpoints need.
struct FakeFirebaseRequest: Sendable {
    var method: HTTPMethod
    var uri: String
    var headers: HTTPHeaders
    var body: [UInt8]

    /// The path without the query.
    var path: String {
        String(self.uri.prefix { $0 != "?" })
    }

    /// The query's parameters, decoded (the last value of a repeated name).
    var query: [String: String] {
        guard let mark = self.uri.firstIndex(of: "?") else { return [:] }
        return Self.lastValues(FakeIdentityForm.decode(String(self.uri[self.uri.index(after: mark)...])))
    }

    /// The form body's parameters, decoded (the last value of a repeated name).
    var form: [String: String] {
        Self.lastValues(FakeIdentityForm.decode(self.body))
    }

    /// Whether the body is declared JSON (`content-type: application/json…`).
    var isJSON: Bool {
        self.headers.first(name: "content-type")?.lowercased().contains("json") ?? false
    }

    /// The body as a JSON object; nil if it is not one (an empty body is an empty object).
    var jsonObject: [String: Any]? {
        if self.body.isEmpty { return [:] }
        return FakeIdentityJWT.object(self.body)
    }

    /// The API key (`?key=` first, then `x-goog-api-key`) and where it came from.
    var apiKey: (key: String?, source: RecordedFirebaseRequest.KeySource) {
        if let key = self.query["key"] { return (key, .query) }
        if let key = self.headers.first(name: "x-goog-api-key") { return (key, .header) }
        return (nil, .none)
    }

    private static func lastValues(_ pairs: [(name: String, value: String)]) -> [String: String] {
        Dictionary(pairs.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}
