import Foundation
import NIOHTTP1

/// One request as `FakeFirebaseHandler` collected it.
typealias FakeFirebaseRequest = FakeHTTPRequest

/// The views of a request that only Google's endpoints need.
extension FakeHTTPRequest {
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
}
