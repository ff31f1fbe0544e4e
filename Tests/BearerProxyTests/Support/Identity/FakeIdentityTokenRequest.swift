import Foundation
import NIOHTTP1

/// A token request as `FakeIdentityProvider` parsed it: the form, the client id and how the client authenticated.
/// Built on the event loop before any lock is taken.
struct FakeIdentityTokenRequest: Sendable {
    /// The endpoint path.
    var path: String
    /// The `iss` of the tokens this endpoint issues.
    var issuer: String
    /// The URLs a client assertion's `aud` may name (this endpoint under the canonical base and the `Host` used).
    var audiences: [String]
    /// The form parameters (the last value of a repeated name).
    var parameters: [String: String]
    /// The client id: `client_id` from the body, else the HTTP Basic user name.
    var clientID: String?
    /// How the client authenticated.
    var authMethod: RecordedTokenRequest.AuthMethod
    /// The secret presented (`client_secret` or HTTP Basic), if any.
    var presentedSecret: String?
    /// A problem with the request as a whole (repeated parameters, several authentication methods, bad Basic
    /// credentials, `client_id` differing from the Basic user name): answered before anything else.
    var problem: FakeIdentityError?
    /// The `content-type` header.
    var contentType: String?
    /// The `client-request-id` header, echoed as the correlation id of errors.
    var correlationID: String?

    init(path: String, issuer: String, audiences: [String], headers: HTTPHeaders, body: [UInt8]) {
        self.path = path
        self.issuer = issuer
        self.audiences = audiences
        self.contentType = headers.first(name: "content-type")
        self.correlationID = headers.first(name: "client-request-id")

        var parameters: [String: String] = [:]
        var repeated: [String] = []
        for (name, value) in FakeIdentityForm.decode(body) {
            if parameters.updateValue(value, forKey: name) != nil { repeated.append(name) }
        }
        self.parameters = parameters
        if !repeated.isEmpty {
            self.problem = .invalidRequest(9002313, "Parameters must not be repeated: \(Set(repeated).sorted()).")
        }
        if let type = self.contentType, !type.lowercased().hasPrefix("application/x-www-form-urlencoded") {
            self.problem = .invalidRequest(
                900144, "The request body must be application/x-www-form-urlencoded (got '\(type)').")
        }

        var methods: [RecordedTokenRequest.AuthMethod] = []
        var basicUser: String?
        if let authorization = headers.first(name: "authorization") {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "basic" {
                methods.append(.basic)
                // RFC 6749 §2.3.1: base64(form-urlencoded id ":" form-urlencoded secret).
                if let decoded = FakeIdentityJWT.decodeBase64URL(parts[1].trimmingCharacters(in: .whitespaces)),
                    let text = String(validating: decoded, as: UTF8.self), let colon = text.firstIndex(of: ":")
                {
                    basicUser = FakeIdentityForm.decodeComponent(text[..<colon])
                    self.presentedSecret = FakeIdentityForm.decodeComponent(text[text.index(after: colon)...])
                } else {
                    self.problem = .invalidClient(7000215, "The HTTP Basic credentials could not be decoded.")
                }
            }
        }
        if let secret = parameters["client_secret"] {
            methods.append(.post)
            self.presentedSecret = secret
        }
        if let assertion = parameters["client_assertion"] {
            let alg = FakeIdentityJWT.split(assertion)?.header?["alg"] as? String
            methods.append(.assertion(alg: alg ?? "?"))
        } else if parameters["client_assertion_type"] != nil {
            methods.append(.assertion(alg: "?"))
        }
        switch methods.count {
        case 0: self.authMethod = .none
        case 1: self.authMethod = methods[0]
        default:
            self.authMethod = .conflicting
            self.problem = .invalidRequest(9002313, "Only one client authentication method may be used at a time.")
        }

        let bodyClientID = parameters["client_id"]
        self.clientID = bodyClientID ?? basicUser
        if let bodyClientID, let basicUser, bodyClientID != basicUser {
            self.problem = .invalidRequest(9002313, "client_id differs from the HTTP Basic user name.")
        }
    }

    /// The requested scopes, split on spaces.
    var scopes: [String] {
        (self.parameters["scope"] ?? "").split(separator: " ").map(String.init)
    }

    /// The record of this request (outcome still to be settled).
    func record(sequence: Int) -> RecordedTokenRequest {
        var redacted = self.parameters
        for name in RecordedTokenRequest.secretParameters where redacted[name] != nil {
            redacted[name] = "<redacted>"
        }
        return RecordedTokenRequest(
            sequence: sequence, path: self.path, grantType: self.parameters["grant_type"], clientID: self.clientID,
            scope: self.parameters["scope"], scopes: self.scopes, authMethod: self.authMethod,
            claims: self.parameters["claims"].flatMap { $0.isEmpty ? nil : $0 },
            clientInfoRequested: self.parameters["client_info"] == "1", refreshTokenID: nil,
            issuedRefreshTokenID: nil, assertionFailure: nil, injected: nil, parameters: redacted,
            contentType: self.contentType, outcome: .rejected(error: "pending", codes: [], status: 0))
    }
}
