/// One native-authentication request to a `FakeIdentityProvider` (`/initiate`, `/challenge`, or the token
/// endpoint with `grant_type=password` or `oob`), as it arrived and what the fake answered.
///
/// The form is kept as sent (continuation tokens and one-time codes included, so tests can check the client sent
/// the latest token) except `password`, which is `"<redacted>"`.
struct RecordedNativeRequest: Sendable, CustomStringConvertible {
    /// Which native-authentication endpoint.
    enum Endpoint: String, Sendable, Equatable {
        case initiate
        case challenge
        case token
    }

    /// 1-based arrival order among native-authentication requests.
    var sequence: Int
    /// Which endpoint.
    var endpoint: Endpoint
    /// Every form parameter (the last value of repeated ones); `password` redacted.
    var parameters: [String: String]
    /// The HTTP status answered; nil if an injected failure hung or dropped the request.
    var status: Int?
    /// The `error` answered, if any.
    var error: String?
    /// The `suberror` answered, if any.
    var suberror: String?
    /// The `challenge_type` answered (`redirect`, `password`, `oob`), if any.
    var challengeType: String?
    /// The `continuation_token` answered (in a success or an error body), if any.
    var issuedContinuationToken: String?

    /// A record of a request not yet answered (`password` redacted).
    init(sequence: Int, endpoint: Endpoint, parameters: [String: String]) {
        self.sequence = sequence
        self.endpoint = endpoint
        self.parameters = parameters
        if self.parameters["password"] != nil { self.parameters["password"] = "<redacted>" }
    }

    /// Notes the fake's own answer.
    mutating func settle(_ result: Result<[String: Any], FakeIdentityError>) {
        switch result {
        case .success(let body):
            self.status = 200
            self.challengeType = body["challenge_type"] as? String
            self.issuedContinuationToken = body["continuation_token"] as? String
        case .failure(let error):
            self.status = error.status
            self.error = error.error
            self.suberror = error.suberror
            self.issuedContinuationToken = error.continuationToken
        }
    }

    /// Notes an injected failure's answer (`.delay` answers normally later: settle again then).
    mutating func settle(injected failure: FakeIdentityProvider.Failure) {
        switch failure {
        case .raw(let status, _, _): self.status = status
        case .hang, .dropConnection, .delay: self.status = nil
        case .error, .throttle, .unavailable, .unavailableRetryAfter:
            self.status = failure.entraError?.status
            self.error = failure.entraError?.error
            self.suberror = failure.entraError?.suberror
        }
    }

    /// The `challenge_type` values the client offered (`challenge_type` split on spaces).
    var offeredChallengeTypes: [String] {
        (self.parameters["challenge_type"] ?? "").split(separator: " ").map(String.init)
    }

    var description: String {
        var parts = ["#\(sequence)", endpoint.rawValue]
        if let grant = parameters["grant_type"] { parts.append("grant=\(grant)") }
        if let challenge = parameters["challenge_type"] { parts.append("challenge_type=\"\(challenge)\"") }
        parts.append("→ \(status.map(String.init) ?? "no answer")")
        if let error { parts.append(error + (suberror.map { "/\($0)" } ?? "")) }
        if let challengeType { parts.append("challenge_type=\(challengeType)") }
        return parts.joined(separator: " ")
    }
}
