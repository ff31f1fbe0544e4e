/// One request `FakeFirebase` received, as recorded on arrival and settled with its answer.
struct RecordedFirebaseRequest: Sendable {
    /// How the parameters came.
    enum BodyStyle: String, Sendable, Equatable {
        /// A JSON object body.
        case json
        /// An `application/x-www-form-urlencoded` body.
        case form
        /// No body (the Microsoft page: the query).
        case none
    }

    /// Where the API key came from.
    enum KeySource: String, Sendable, Equatable {
        /// The `key` query parameter.
        case query
        /// The `x-goog-api-key` header.
        case header
        /// Neither.
        case none
    }

    /// 1-based order among all requests to the fake.
    var sequence: Int
    var endpoint: FakeFirebase.Endpoint
    /// The request path (without the query).
    var path: String
    /// The parameters as sent, flattened to text: JSON members by name (nested objects as `outer.inner`, e.g.
    /// `customParameter.tenant`; arrays joined with `,`; booleans `true`/`false`), form or query pairs by name.
    /// `password` is recorded as `<redacted>`.
    var parameters: [String: String]
    var bodyStyle: BodyStyle
    /// The API key sent, if any, and where.
    var apiKey: String?
    var keySource: KeySource
    /// The HTTP status answered (0 when the connection was dropped or left hanging).
    var status = 0
    /// The answer's error code (leading token of the envelope's `message`, or of a 200's `errorMessage`), if any.
    var errorCode: String?
    /// The injected failure played, if any (`FakeFirebase.Failure.label`).
    var injected: String?
    /// Whether a signInWithIdp answer was `needConfirmation:true`.
    var needConfirmation = false
    /// The Firebase uid the answer signed in (or asked to confirm), if any.
    var localID: String?

    /// Shortcut for `parameters[name]`.
    subscript(_ name: String) -> String? { self.parameters[name] }
}
