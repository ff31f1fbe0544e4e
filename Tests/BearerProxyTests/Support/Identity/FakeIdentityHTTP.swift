import Foundation
import NIOCore
import NIOHTTP1

/// The fake identity provider's routes (served by ``FakeHTTPHandler``): which request gets which reply. Called on the connection's event loop
/// once a request has fully arrived; the lock-guarded work happens in `FakeIdentityState`.
///
/// URLs in documents and the audiences accepted in client assertions follow the `Host` the client used
/// (`127.0.0.1:PORT` or `localhost:PORT`), as a real server's own URL would.
struct FakeIdentityEndpoints: FakeHTTPEndpoints {
    /// Paths (the tenant segment is fixed: `contoso`).
    static let entraDiscoveryPath = "/contoso/v2.0/.well-known/openid-configuration"
    static let entraTokenPath = "/contoso/oauth2/v2.0/token"
    static let oidcDiscoveryPath = "/oidc/.well-known/openid-configuration"
    static let oidcTokenPath = "/oidc/token"
    static let initiatePath = "/contoso/oauth2/v2.0/initiate"
    static let challengePath = "/contoso/oauth2/v2.0/challenge"
    static let entraDeviceCodePath = "/contoso/oauth2/v2.0/devicecode"
    static let oidcDeviceCodePath = "/oidc/devicecode"
    static let entraAuthorizePath = "/contoso/oauth2/v2.0/authorize"
    static let oidcAuthorizePath = "/oidc/authorize"
    static let revocationPath = "/oidc/revoke"
    static let deviceLoginPath = "/contoso/devicelogin"

    /// One request as the handler collected it.
    typealias Request = FakeHTTPRequest

    let state: FakeIdentityState
    let verifier: FakeIdentityAssertionVerifier
    let clients: [String: FakeIdentityProvider.Client]
    /// `http://127.0.0.1:PORT`.
    let canonicalBaseURL: String

    /// The reply to `request`.
    func reply(to request: Request) -> FakeIdentityReply {
        let base = request.headers.first(name: "host").map { "http://\($0)" } ?? self.canonicalBaseURL
        switch request.path {
        case Self.entraDiscoveryPath, Self.oidcDiscoveryPath:
            return self.discovery(request, base: base)
        case Self.entraTokenPath, Self.oidcTokenPath:
            guard request.method == .POST else {
                let error = FakeIdentityError.invalidRequest(900561)
                return .respond(error.response(baseURL: base, correlationID: nil), holdable: false)
            }
            return self.token(request, base: base)
        case Self.initiatePath, Self.challengePath:
            guard request.method == .POST else { return Self.postOnly(base: base) }
            return self.state.nativeRequested(
                request.path == Self.initiatePath ? .initiate : .challenge, parameters: request.form,
                correlationID: request.headers.first(name: "client-request-id"), baseURL: base)
        case Self.entraDeviceCodePath, Self.oidcDeviceCodePath:
            guard request.method == .POST else { return Self.postOnly(base: base) }
            return self.state.deviceAuthorizationRequested(
                parameters: request.form, correlationID: request.headers.first(name: "client-request-id"),
                baseURL: base)
        case Self.entraAuthorizePath, Self.oidcAuthorizePath:
            return self.state.authorizeRequested(query: request.query, baseURL: base)
        case Self.revocationPath:
            guard request.method == .POST else { return Self.postOnly(base: base) }
            return self.state.revocationRequested(
                parameters: request.form, correlationID: request.headers.first(name: "client-request-id"),
                baseURL: base)
        case Self.deviceLoginPath:
            let page =
                "<html><body><h1>Enter code</h1><p>FakeIdentityProvider: tests approve device codes.</p></body></html>"
            let response = FakeIdentityResponse(
                status: 200, headers: [("content-type", "text/html; charset=utf-8")], body: Array(page.utf8))
            return .respond(response, holdable: false)
        case "/contoso/discovery/v2.0/keys", "/oidc/jwks":
            // The fake signs with HS256 and publishes no key; tests verify with FakeIdentityJWT.signingKey.
            return .respond(.json(["keys": [Any]()]), holdable: false)
        default:
            let body: [String: Any] = [
                "error": "not_found", "error_description": "FakeIdentityProvider serves no \(request.path)",
            ]
            return .respond(.json(status: 404, body), holdable: false)
        }
    }

    var bodyTooLarge: FakeIdentityResponse { .json(status: 413, ["error": "request_too_large"]) }

    func answer(_ request: FakeHTTPRequest, respond: @escaping @Sendable (FakeIdentityResponse) -> Void) {
        switch self.reply(to: request) {
        case .respond(let response, let holdable):
            // A holdable answer waits while the provider's latch is on; `release()` then sends it.
            if holdable, self.state.holdIfLatched({ respond(response) }) { return }
            respond(response)
        }
    }

    /// `invalid_request` 900561: the endpoint only accepts POST.
    private static func postOnly(base: String) -> FakeIdentityReply {
        let error = FakeIdentityError.invalidRequest(900561)
        return .respond(error.response(baseURL: base, correlationID: nil), holdable: false)
    }

    private func discovery(_ request: Request, base: String) -> FakeIdentityReply {
        self.state.discoveryRequested(path: request.path)
        return .respond(.json(self.document(for: request.path, base: base)), holdable: false)
    }

    /// The OpenID Connect discovery document of the Entra-style tenant or of the generic issuer.
    func document(for path: String, base: String) -> [String: Any] {
        var document: [String: Any] = [
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "response_modes_supported": ["query", "fragment", "form_post"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["HS256"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            "claims_parameter_supported": true,
        ]
        if path == Self.entraDiscoveryPath {
            document["issuer"] = "\(base)/contoso/v2.0"
            document["token_endpoint"] = "\(base)\(Self.entraTokenPath)"
            document["authorization_endpoint"] = "\(base)\(Self.entraAuthorizePath)"
            document["device_authorization_endpoint"] = "\(base)\(Self.entraDeviceCodePath)"
            document["jwks_uri"] = "\(base)/contoso/discovery/v2.0/keys"
            document["end_session_endpoint"] = "\(base)/contoso/oauth2/v2.0/logout"
            document["tenant_region_scope"] = "EU"
            document["cloud_instance_name"] = "microsoftonline.com"
        } else {
            document["issuer"] = "\(base)/oidc"
            document["token_endpoint"] = "\(base)\(Self.oidcTokenPath)"
            document["authorization_endpoint"] = "\(base)\(Self.oidcAuthorizePath)"
            document["device_authorization_endpoint"] = "\(base)\(Self.oidcDeviceCodePath)"
            document["revocation_endpoint"] = "\(base)\(Self.revocationPath)"
            document["jwks_uri"] = "\(base)/oidc/jwks"
        }
        return document
    }

    private func token(_ request: Request, base: String) -> FakeIdentityReply {
        let isEntra = request.path == Self.entraTokenPath
        let issuer = isEntra ? "\(base)/contoso/v2.0" : "\(base)/oidc"
        var audiences = ["\(base)\(request.path)"]
        if base != self.canonicalBaseURL { audiences.append("\(self.canonicalBaseURL)\(request.path)") }
        let parsed = FakeIdentityTokenRequest(
            path: request.path, issuer: issuer, audiences: audiences, headers: request.headers, body: request.body)

        var verdict: FakeIdentityAssertionVerifier.Verdict?
        if case .assertion = parsed.authMethod, let clientID = parsed.clientID, let client = self.clients[clientID],
            client.isConfidential
        {
            verdict = self.verifier.verify(
                assertion: parsed.parameters["client_assertion"],
                assertionType: parsed.parameters["client_assertion_type"], client: client, audiences: audiences,
                now: Int(Date().timeIntervalSince1970))
        }
        return self.state.tokenRequested(parsed, verdict: verdict, baseURL: base)
    }
}

/// What the fake identity provider does with one request, as decided when the request has fully arrived.
enum FakeIdentityReply: Sendable {
    /// Write `response`. `holdable` responses wait while the provider's latch is on
    /// (`FakeIdentityProvider.holdTokenResponses()`): every token-endpoint response is holdable.
    case respond(FakeIdentityResponse, holdable: Bool)
}

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

/// `application/x-www-form-urlencoded` as the fake identity provider reads it (and as tests may write it).
enum FakeIdentityForm {
    /// The `name=value` pairs of a form body, in order, decoded (`+` is a space, `%XX` an octet of UTF-8).
    /// A pair without `=` has an empty value; empty pairs (`&&`) are skipped.
    static func decode(_ body: [UInt8]) -> [(name: String, value: String)] {
        self.decode(String(decoding: body, as: UTF8.self))
    }

    /// `decode(_:)` for a body given as text.
    static func decode(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (self.decodeComponent(pair[..<equals]), self.decodeComponent(pair[pair.index(after: equals)...]))
            }
            return (self.decodeComponent(pair), "")
        }
    }

    /// One decoded component: `+` becomes a space, then percent-decoding (left as it is if that fails).
    static func decodeComponent(_ component: some StringProtocol) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// A form body for `pairs`: every byte but the unreserved set (`A-Z a-z 0-9 - . _ ~`) percent-encoded, spaces
    /// as `+` (what an OAuth client sends).
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(self.encodeComponent($0.0))=\(self.encodeComponent($0.1))" }.joined(separator: "&")
    }

    /// One encoded component (see `encode(_:)`).
    static func encodeComponent(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += byte < 16 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return out
    }
}
