import Foundation

/// The lock-guarded handling of one request: record it, check the API key, play a failure queued for the
/// endpoint if there is one, else ask `FakeFirebaseOperations`, and settle the record with the answer.
extension FakeFirebaseState {
    /// Records an Identity Toolkit or securetoken call and decides its reply.
    func apiCalled(_ endpoint: FakeFirebase.Endpoint, request: FakeFirebaseRequest, baseURL: String)
        -> FakeFirebaseReply
    {
        let now = Date()
        let (key, keySource) = request.apiKey
        // securetoken takes a form or JSON; Identity Toolkit takes JSON only.
        let looksJSON = request.isJSON || request.body.first { ![9, 10, 13, 32].contains($0) } == UInt8(ascii: "{")
        let style: RecordedFirebaseRequest.BodyStyle = endpoint == .secureToken && !looksJSON ? .form : .json
        let parameters: [String: Any]? = style == .form ? request.form : request.jsonObject
        return self.mutate { data in
            var record = RecordedFirebaseRequest(
                sequence: data.requests.count + 1, endpoint: endpoint, path: request.path,
                parameters: Self.flatten(parameters ?? [:]), bodyStyle: style, apiKey: key, keySource: keySource)
            let reply: FakeFirebaseReply
            if let error = self.operations.checkAPIKey(key, emulatorMode: data.emulatorMode, endpoint: endpoint) {
                reply = Self.settle(&record, .failure(error))
            } else if let failure = data.takeFailure(at: endpoint) {
                record.injected = failure.label
                reply = Self.play(failure, record: &record)
            } else if let parameters {
                let result: Result<[String: Any], FakeFirebaseError>
                switch endpoint {
                case .createAuthUri:
                    result = self.operations.createAuthUri(parameters, baseURL: baseURL, data: &data)
                case .signInWithIdp:
                    result = self.operations.signInWithIdp(parameters, data: &data, now: now)
                case .signInWithPassword:
                    result = self.operations.signInWithPassword(parameters, data: &data, now: now)
                case .secureToken:
                    result = self.operations.secureToken(parameters, data: &data, now: now)
                case .authorize:
                    result = .failure(FakeFirebaseError(status: 404, message: "Not Found"))
                }
                reply = Self.settle(&record, result)
            } else {
                reply = Self.settle(
                    &record, .failure(FakeFirebaseError(status: 400, message: "Invalid JSON payload received.")))
            }
            data.requests.append(record)
            return reply
        }
    }

    /// Records a request to the fake Microsoft authorization endpoint and decides its reply.
    func authorizeRequested(query: [String: String], path: String) -> FakeFirebaseReply {
        self.mutate { data in
            var record = RecordedFirebaseRequest(
                sequence: data.requests.count + 1, endpoint: .authorize, path: path, parameters: query,
                bodyStyle: .none, apiKey: nil, keySource: .none)
            let reply: FakeFirebaseReply
            if let failure = data.takeFailure(at: .authorize) {
                record.injected = failure.label
                if let envelope = failure.envelope {
                    record.status = envelope.status
                    reply = .respond(.html(status: envelope.status, "<html><body>\(envelope.message)</body></html>"))
                } else {
                    reply = Self.play(failure, record: &record)
                }
            } else {
                let response = self.operations.authorize(query, data: &data)
                record.status = response.status
                if response.status == 302, let location = response.headers.first(where: { $0.0 == "location" })?.1,
                    let items = URLComponents(string: location)?.queryItems,
                    let error = items.first(where: { $0.name == "error" })?.value
                {
                    record.errorCode = error
                }
                reply = .respond(response)
            }
            data.requests.append(record)
            return reply
        }
    }

    // MARK: - Helpers

    /// Settles `record` with `result` and returns the JSON reply.
    private static func settle(
        _ record: inout RecordedFirebaseRequest, _ result: Result<[String: Any], FakeFirebaseError>
    ) -> FakeFirebaseReply {
        switch result {
        case .success(let body):
            record.status = 200
            record.errorCode = (body["errorMessage"] as? String).map(FakeFirebaseError.code(of:))
            record.needConfirmation = body["needConfirmation"] as? Bool ?? false
            record.localID = body["localId"] as? String ?? body["user_id"] as? String
            return .respond(.json(body))
        case .failure(let error):
            record.status = error.status
            record.errorCode = error.invalidKeyService == nil ? error.code : "API_KEY_INVALID"
            if error.message == FakeFirebaseError.missingAPIKey.message { record.errorCode = "PERMISSION_DENIED" }
            return .respond(error.response())
        }
    }

    /// The reply for an injected failure.
    private static func play(_ failure: FakeFirebase.Failure, record: inout RecordedFirebaseRequest)
        -> FakeFirebaseReply
    {
        switch failure {
        case .raw(let status, let headers, let body):
            record.status = status
            let sorted = headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            return .respond(FakeFirebaseResponse(status: status, headers: sorted, body: Array(body.utf8)))
        case .error, .throttle, .unavailable:
            return Self.settle(&record, .failure(failure.envelope!))
        }
    }

    /// A JSON object flattened to text for records (see `RecordedFirebaseRequest.parameters`).
    static func flatten(_ object: [String: Any], prefix: String = "") -> [String: String] {
        var flat: [String: String] = [:]
        for (name, value) in object {
            let key = prefix + name
            if let nested = value as? [String: Any] {
                flat.merge(Self.flatten(nested, prefix: key + "."), uniquingKeysWith: { _, new in new })
            } else if let array = value as? [Any] {
                flat[key] = array.map(Self.text(of:)).joined(separator: ",")
            } else {
                flat[key] = key == "password" ? "<redacted>" : Self.text(of: value)
            }
        }
        return flat
    }

    private static func text(of value: Any) -> String {
        switch value {
        case let text as String:
            return text
        case let number as NSNumber:
            // JSONSerialization's numbers cast to Bool too; only its booleans have the boolean NSNumber type.
            guard type(of: number) == Self.booleanNumberType else { return number.stringValue }
            return number.boolValue ? "true" : "false"
        default:
            return "\(value)"
        }
    }

    /// The class of JSONSerialization's `true` / `false`.
    private static let booleanNumberType = type(of: NSNumber(value: true))
}

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
