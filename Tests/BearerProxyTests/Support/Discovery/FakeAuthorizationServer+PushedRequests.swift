import Foundation

/// The fake's pushed authorization requests (RFC 9126), offered with `Settings.offersPushedRequests`: `/par` takes
/// an authorization request's parameters with the client's authentication as at `/token` (§2), refuses a client it
/// does not know (`invalid_client`, §2.3) and answers `201` with a one-time `request_uri` (§2.2); `/authorize` then
/// takes `client_id` and `request_uri` in place of the parameters (§4).
extension FakeAuthorizationServer {
    /// An error answer `/par` gives every client it knows (§2.3).
    struct PushRefusal: Sendable {
        var status = 400
        var error: String
        var description: String?
    }

    struct PushedRequests: Sendable {
        /// Every push's form, as it came (a `client_secret` included).
        var forms: [[String: String]] = []
        /// How each push authenticated its client: `client_secret_basic`, `client_secret_post` or `none`.
        var authentications: [String] = []
        /// The client id of each push `/par` refused as unknown (`invalid_client`).
        var unknownClients: [String] = []
        /// The requests pushed and not yet used, by `request_uri`.
        var waiting: [String: [String: String]] = [:]
    }
}

extension FakeAuthorizationServer.Endpoints {
    func pushRequest(_ request: FakeHTTPRequest, origin: String) -> FakeIdentityResponse {
        let form = request.form
        let basic = Self.basic(request)
        return state.record.withLock { record in
            record.pushed.forms.append(form)
            let proof = Self.checkProof(request, origin: origin, in: &record)
            if case .refused(let answer) = proof { return answer }
            record.pushed.authentications.append(
                basic != nil ? "client_secret_basic" : form["client_secret"] != nil ? "client_secret_post" : "none")
            guard let client = basic?.id ?? form["client_id"] else {
                return .json(status: 401, ["error": "invalid_client"])
            }
            let settings = record.settings
            let known =
                record.clients.contains(client) || settings.preregistered.contains(client)
                || settings.secrets[client] != nil || settings.metadataDocuments.contains(client)
            if settings.refusesEveryClient || !known {
                record.pushed.unknownClients.append(client)
                return .json(
                    status: 401, ["error": "invalid_client", "error_description": "Client authentication failed"])
            }
            if let secret = settings.secrets[client], secret != basic?.secret ?? form["client_secret"] {
                return .json(status: 401, ["error": "invalid_client"])
            }
            if let refusal = settings.pushRefusal {
                var body = ["error": refusal.error]
                if let description = refusal.description { body["error_description"] = description }
                return .json(status: refusal.status, body)
            }
            record.counter += 1
            let requestURI = "urn:ietf:params:oauth:request_uri:pushed-\(record.counter)"
            var parameters = form
            parameters["client_secret"] = nil
            parameters["client_id"] = client
            if let thumbprint = proof.thumbprint {
                // RFC 9449 §10.1: the push's proof binds the code as `dpop_jkt` would, and both must agree.
                if let jkt = form["dpop_jkt"], jkt != thumbprint {
                    return .json(status: 400, ["error": "invalid_dpop_proof", "error_description": "dpop_jkt differs"])
                }
                parameters["dpop_jkt"] = thumbprint
            }
            record.pushed.waiting[requestURI] = parameters
            return .json(
                status: 201, ["request_uri": requestURI, "expires_in": 60], headers: Self.nonceHeaders(record))
        }
    }

    /// The parameters pushed under `query`'s `request_uri`, used once, for the same `client_id` (§4); empty — an
    /// invalid request — for any other.
    static func pushedQuery(
        _ query: [String: String], in record: inout FakeAuthorizationServer.Record
    ) -> [String: String] {
        guard let requestURI = query["request_uri"], let pushed = record.pushed.waiting.removeValue(forKey: requestURI),
            pushed["client_id"] == query["client_id"]
        else { return [:] }
        return pushed
    }
}
