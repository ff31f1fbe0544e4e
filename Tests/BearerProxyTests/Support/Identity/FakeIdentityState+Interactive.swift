import Foundation

/// The lock-guarded side of the interactive endpoints (native authentication's `/initiate` and `/challenge`, the
/// device authorization endpoint, the authorization endpoint, revocation): each records the request, plays a
/// failure queued for its endpoint if there is one, else asks `FakeIdentityGrants`. None of these answers is held
/// by the token latch.
extension FakeIdentityState {
    /// Records a native-authentication request (`.initiate` or `.challenge`) and decides its reply.
    func nativeRequested(
        _ endpoint: RecordedNativeRequest.Endpoint, parameters: [String: String], correlationID: String?,
        baseURL: String
    ) -> FakeIdentityReply {
        let now = Date()
        return self.mutate { data in
            var record = RecordedNativeRequest(
                sequence: data.nativeRequests.count + 1, endpoint: endpoint, parameters: parameters)
            let failure = data.takeFailure(at: endpoint == .initiate ? .initiate : .challenge)
            if let failure { record.settle(injected: failure) }
            let reply = Self.play(failure, baseURL: baseURL) {
                let result =
                    endpoint == .initiate
                    ? self.grants.initiate(parameters, data: &data, now: now)
                    : self.grants.challenge(parameters, data: &data, now: now)
                record.settle(result)
                return Self.response(result, baseURL: baseURL, correlationID: correlationID, now: now)
            }
            data.nativeRequests.append(record)
            return reply
        }
    }

    /// Records a device authorization request and decides its reply.
    func deviceAuthorizationRequested(parameters: [String: String], correlationID: String?, baseURL: String)
        -> FakeIdentityReply
    {
        let now = Date()
        return self.mutate { data in
            data.deviceCodeRequests.append(parameters)
            return Self.play(data.takeFailure(at: .deviceAuthorization), baseURL: baseURL) {
                let result = self.grants.deviceAuthorization(parameters, baseURL: baseURL, data: &data, now: now)
                return Self.response(result, baseURL: baseURL, correlationID: correlationID, now: now)
            }
        }
    }

    /// Records an authorization request (its query) and decides its reply.
    func authorizeRequested(query: [String: String], baseURL: String) -> FakeIdentityReply {
        let now = Date()
        return self.mutate { data in
            data.authorizeRequests.append(query)
            return Self.play(data.takeFailure(at: .authorize), baseURL: baseURL) {
                switch self.grants.authorize(query, data: &data, now: now) {
                case .redirect(let location):
                    let response = FakeIdentityResponse(
                        status: 302,
                        headers: [
                            ("location", location), ("cache-control", "no-store"),
                            ("content-type", "text/html; charset=utf-8"),
                        ],
                        body: Array("<html><body>Redirecting…</body></html>".utf8))
                    return .respond(response, holdable: false)
                case .page(let status, let message):
                    let escaped = message.replacingOccurrences(of: "&", with: "&amp;")
                        .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                    let response = FakeIdentityResponse(
                        status: status, headers: [("content-type", "text/html; charset=utf-8")],
                        body: Array(
                            "<html><body><h1>Sorry, but we're having trouble signing you in.</h1><p>\(escaped)</p></body></html>"
                                .utf8))
                    return .respond(response, holdable: false)
                }
            }
        }
    }

    /// Records a revocation request and decides its reply.
    func revocationRequested(parameters: [String: String], correlationID: String?, baseURL: String)
        -> FakeIdentityReply
    {
        let now = Date()
        return self.mutate { data in
            Self.play(data.takeFailure(at: .revocation), baseURL: baseURL) {
                if let error = self.grants.revoke(parameters, data: &data) {
                    return .respond(
                        error.response(baseURL: baseURL, correlationID: correlationID, now: now), holdable: false)
                }
                return .respond(
                    FakeIdentityResponse(status: 200, headers: [("cache-control", "no-store")], body: []),
                    holdable: false)
            }
        }
    }

    // MARK: - Helpers

    /// The reply for an injected `failure`, or `normal()` when there is none.
    private static func play(
        _ failure: FakeIdentityProvider.Failure?, baseURL: String, normal: () -> FakeIdentityReply
    ) -> FakeIdentityReply {
        switch failure {
        case nil:
            return normal()
        case .raw(let status, let headers, let body)?:
            return .respond(.raw(status: status, headers: headers, body: body), holdable: false)
        case .error?, .throttle?, .unavailable?, .unavailableRetryAfter?:
            return .respond(
                failure!.entraError!.response(baseURL: baseURL, correlationID: nil), holdable: false)
        }
    }

    /// A JSON reply: the body with 200, or the Entra error.
    private static func response(
        _ result: Result<[String: Any], FakeIdentityError>, baseURL: String, correlationID: String?, now: Date
    ) -> FakeIdentityReply {
        switch result {
        case .success(let body):
            var headers: [(String, String)] = [("x-ms-request-id", UUID().uuidString.lowercased())]
            if let correlationID { headers.append(("client-request-id", correlationID)) }
            return .respond(.json(body, headers: headers), holdable: false)
        case .failure(let error):
            return .respond(
                error.response(baseURL: baseURL, correlationID: correlationID, now: now), holdable: false)
        }
    }
}
