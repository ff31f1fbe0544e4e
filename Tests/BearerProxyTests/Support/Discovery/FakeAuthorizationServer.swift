import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// A protected resource and its own authorization server on one origin, 127.0.0.1:0, for the sign-in and data-plane
/// tests of discovered routes (#25): `/mcp` asks for a token (RFC 9728 challenge), the metadata of both
/// (RFC 9728, RFC 8414), `/authorize` (code + PKCE S256, `resource`, `iss`), `/token` (the code and rotating
/// refresh tokens, each bound to its client and resource) and `/register` (RFC 7591). The resource accepts only
/// tokens this server issued for its own `resource`, and answers with the audience it saw. With `tls`, it speaks
/// https with the fixture certificate (`TLSFixtures`: trust `TLSFixtures.caFile`).
final class FakeAuthorizationServer: Sendable {
    /// What `/authorize` does with the next request.
    enum AuthorizeOutcome: Sendable {
        case approve
        case deny
        case wrongState
        case wrongIssuer
        case noIssuer
    }

    struct Settings: Sendable {
        var authorizeOutcome: AuthorizeOutcome = .approve
        /// `authorization_response_iss_parameter_supported` (RFC 9207).
        var advertisesIssuer = true
        var offersRegistration = true
        /// Clients known without registration (a route's `clientId`).
        var preregistered: Set<String> = []
        /// Client ID Metadata Documents the server would fetch and accept, by URL (the client id); when there are
        /// any, its metadata says `client_id_metadata_document_supported: true`.
        var metadataDocuments: Set<String> = []
        /// The authorization server the resource's metadata names; nil: this one.
        var authorizationServer: String?
        /// The `resource` its metadata names; nil: its own URL.
        var metadataResource: String?
        /// A status the resource's metadata answers instead of 200 (a metadata server in trouble).
        var metadataStatus: Int?
        /// The resource refuses every token (`invalid_token`), even one this server issued for it.
        var refusesTokens = false
        /// The resource refuses a token with a challenge that names only `resource_metadata` (and `scope`), no
        /// `error` code: RFC 6750 §3.1 lets it leave the code out.
        var bareChallenge = false
        /// Confidential clients known without registration, with their secrets: the token endpoint refuses them
        /// (`invalid_client`) without it, by either method.
        var secrets: [String: String] = [:]
        /// The token endpoint refuses every client (`invalid_client`), even one it has just registered.
        var refusesEveryClient = false
        /// `token_endpoint_auth_methods_supported` (RFC 8414 §2); nil: not listed.
        var authMethods: [String]?
        /// The `scope` of the resource's 401 challenge (a sign-in's initial scopes); nil: none.
        var challengeScope: String?
        /// Scopes the resource requires: a token without one of them gets `403` `insufficient_scope` naming them
        /// (RFC 6750 §3.1).
        var requiredScopes: [String] = []
        /// Scopes a sign-in asks for that the server does not grant (RFC 6749 §3.3 lets it grant fewer).
        var withheldScopes: Set<String> = []
        /// Registration hands out a `client_secret` and a `registration_access_token` (RFC 7591 §3.2.1, RFC 7592
        /// §3), each kept in `issued` for the scans of output for secrets.
        var registrationSecrets = false
        /// The metadata names a `revocation_endpoint` (RFC 8414 §2, RFC 7009).
        var offersRevocation = true
        /// Called as a revocation request arrives, before it is answered: a test's look at the client's side then.
        var onRevocation: (@Sendable () -> Void)?
        /// Token responses carry a refresh token (RFC 6749 §5.1 leaves it optional).
        var issuesRefreshTokens = true
        /// Refresh-token grants are held, unanswered and not yet redeemed, until ``releaseHeldRefreshes()``.
        var holdsRefreshes = false
        /// Pushed authorization requests (RFC 9126) at `/par`, named in the metadata; see `+PushedRequests`.
        var offersPushedRequests = false
        var requiresPushedRequests = false
        var pushRefusal: PushRefusal?
        /// DPoP (RFC 9449); see `+DPoP`.
        var dpop = DPoPSettings()
    }

    struct Record: Sendable {
        var settings = Settings()
        var clients: Set<String> = []
        var registrations = 0
        var codes: [String: (client: String, redirect: String, challenge: String, resource: String, scope: String)] =
            [:]
        var refreshTokens: [String: (client: String, resource: String, scope: String)] = [:]
        var accessTokens: [String: String] = [:]
        /// The scopes each access token was granted.
        var accessScopes: [String: Set<String>] = [:]
        var authorizeQueries: [[String: String]] = []
        var tokenForms: [[String: String]] = []
        var revoked: [String] = []
        var resourceMetadataRequests = 0
        /// Every access and refresh token issued, for the scans of output for secrets.
        var issued: [String] = []
        /// How each token request authenticated its client: `client_secret_basic`, `client_secret_post` or `none`.
        var tokenAuthentications: [String] = []
        /// The bearer token of every request the resource answered, in order (none for a request without one).
        var bearers: [String] = []
        /// The refresh-token grants held (``Settings/holdsRefreshes``): each answers its request when called.
        var held: [@Sendable () -> Void] = []
        var pushed = PushedRequests()
        var dpop = DPoPRecord()
        var counter = 0
    }

    private let server: FakeEndpointServer
    let state: Shared
    private let scheme: String

    var port: Int { server.port }
    var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }
    /// The protected resource's URL, the route's upstream and the `resource` of every token.
    var resource: String { baseURL + "/mcp" }

    private init(server: FakeEndpointServer, state: Shared, scheme: String) {
        self.server = server
        self.state = state
        self.scheme = scheme
    }

    static func start(_ settings: Settings = Settings(), tls: Bool = false) async throws -> FakeAuthorizationServer {
        let state = Shared(record: Record(settings: settings))
        let sslContext = tls ? try TLSFixtures.serverContext() : nil
        let scheme = tls ? "https" : "http"
        let server = try await FakeEndpointServer.start(Endpoints(state: state, scheme: scheme), tls: sslContext)
        return FakeAuthorizationServer(server: server, state: state, scheme: scheme)
    }

    /// `routes.json`'s `routes`: one discovered route, `prefix` to this server's resource, with `discovery` when
    /// given (the members of that object, as JSON).
    func routes(prefix: String = "/a", discovery: String? = nil) -> String {
        let settings = discovery.map { #", "discovery": { \#($0) }"# } ?? ""
        return #"[{ "prefix": "\#(prefix)", "upstream": "\#(resource)", "auth": "discover"\#(settings) }]"#
    }

    func update(_ change: (inout Settings) -> Void) { state.record.withLock { change(&$0.settings) } }
    var registrations: Int { state.record.withLock { $0.registrations } }
    var tokenForms: [[String: String]] { state.record.withLock { $0.tokenForms } }
    var tokenAuthentications: [String] { state.record.withLock { $0.tokenAuthentications } }
    var issuedTokens: [String] { state.record.withLock { $0.issued } }
    /// The bearer tokens the resource was sent, in order.
    var bearers: [String] { state.record.withLock { $0.bearers } }
    var authorizeQueries: [[String: String]] { state.record.withLock { $0.authorizeQueries } }
    var pushed: PushedRequests { state.record.withLock { $0.pushed } }
    /// How many times the resource's metadata (RFC 9728) was asked for.
    var resourceMetadataRequests: Int { state.record.withLock { $0.resourceMetadataRequests } }
    /// The tokens revoked at `/revoke` (RFC 7009).
    var revoked: [String] { state.record.withLock { $0.revoked } }
    /// Forgets every registered client (a server that lost its registrations: `invalid_client`).
    func forgetClients() { state.record.withLock { $0.clients = [] } }

    /// From now on refuses every client at its token endpoint (`invalid_client`), registered or not.
    func refuseEveryClient() { state.record.withLock { $0.settings.refusesEveryClient = true } }
    /// Issues an access and a refresh token for `client` and `resource` as a sign-in would have, without one: for a
    /// test whose subject is what comes after the sign-in.
    func issueTokens(client: String, resource: String) -> (access: String, refresh: String) {
        state.record.withLock { record in
            record.counter += 1
            let access = "at-\(record.counter)-\(UUID().uuidString)"
            let refresh = "rt-\(record.counter)-\(UUID().uuidString)"
            record.accessTokens[access] = resource
            record.refreshTokens[refresh] = (client, resource, "")
            record.issued += [access, refresh]
            return (access, refresh)
        }
    }

    /// Revokes every access token issued so far: the resource answers `invalid_token`.
    func revokeAccessTokens() { state.record.withLock { $0.accessTokens = [:] } }
    /// How many refresh-token grants are held now (``Settings/holdsRefreshes``).
    var heldRefreshes: Int { state.record.withLock { $0.held.count } }

    /// Stops holding refresh-token grants and answers the held ones, redeeming them now.
    func releaseHeldRefreshes() {
        let held = state.record.withLock { record in
            record.settings.holdsRefreshes = false
            defer { record.held = [] }
            return record.held
        }
        for answer in held { answer() }
    }

    /// Forgets every refresh token issued: the next refresh gets `invalid_grant`.
    func revokeRefreshTokens() { state.record.withLock { $0.refreshTokens = [:] } }

    func shutdown() async {
        await server.shutdown()
    }

    /// The state the connections share.
    final class Shared: Sendable {
        let record: Mutex<Record>

        init(record: Record) { self.record = Mutex(record) }
    }

    struct Endpoints: FakeHTTPEndpoints {
        let state: Shared
        let scheme: String

        var bodyTooLarge: FakeIdentityResponse { .json(status: 413, ["error": "request_too_large"]) }

        func answer(_ request: FakeHTTPRequest, respond: @escaping @Sendable (FakeIdentityResponse) -> Void) {
            if request.path == "/token", request.form["grant_type"] == "refresh_token" {
                let held = state.record.withLock { record in
                    guard record.settings.holdsRefreshes else { return false }
                    record.held.append { respond(reply(request)) }
                    return true
                }
                if held { return }
            }
            respond(reply(request))
        }

        private func reply(_ request: FakeHTTPRequest) -> FakeIdentityResponse {
            let origin = scheme + "://" + (request.headers.first(name: "host") ?? "")
            switch request.path {
            case "/.well-known/oauth-protected-resource/mcp":
                let settings = state.record.withLock { record in
                    record.resourceMetadataRequests += 1
                    return record.settings
                }
                if let status = settings.metadataStatus { return .json(status: status, ["error": "unavailable"]) }
                var document: [String: Any] = [
                    "resource": settings.metadataResource ?? origin + "/mcp",
                    "authorization_servers": [settings.authorizationServer ?? origin],
                ]
                if settings.dpop.required { document["dpop_bound_access_tokens_required"] = true }
                return .json(document)
            case "/.well-known/oauth-authorization-server":
                let settings = state.record.withLock { $0.settings }
                var document: [String: Any] = [
                    "issuer": origin, "authorization_endpoint": origin + "/authorize",
                    "token_endpoint": origin + "/token", "code_challenge_methods_supported": ["S256"],
                    "authorization_response_iss_parameter_supported": settings.advertisesIssuer,
                ]
                if settings.offersRevocation { document["revocation_endpoint"] = origin + "/revoke" }
                if settings.offersRegistration { document["registration_endpoint"] = origin + "/register" }
                if let methods = settings.authMethods { document["token_endpoint_auth_methods_supported"] = methods }
                if !settings.metadataDocuments.isEmpty { document["client_id_metadata_document_supported"] = true }
                if settings.offersPushedRequests { document["pushed_authorization_request_endpoint"] = origin + "/par" }
                if settings.requiresPushedRequests { document["require_pushed_authorization_requests"] = true }
                if let algorithms = settings.dpop.algorithms {
                    document["dpop_signing_alg_values_supported"] = algorithms
                }
                return .json(document)
            case "/authorize":
                return authorize(request.query, origin: origin)
            case "/token":
                return token(request, origin: origin)
            case "/par":
                return pushRequest(request, origin: origin)
            case "/revoke":
                state.record.withLock { $0.settings.onRevocation }?()
                return state.record.withLock { record in
                    if let token = request.form["token"] {
                        record.revoked.append(token)
                        record.refreshTokens[token] = nil
                    }
                    return FakeIdentityResponse(status: 200, headers: [], body: [])
                }
            case "/register":
                return state.record.withLock { record in
                    record.registrations += 1
                    record.counter += 1
                    let id = "client-\(record.counter)"
                    record.clients.insert(id)
                    guard record.settings.registrationSecrets else {
                        return .json(status: 201, ["client_id": id, "token_endpoint_auth_method": "none"])
                    }
                    let (secret, access) = ("cs-\(UUID().uuidString)", "rat-\(UUID().uuidString)")
                    record.issued += [secret, access]
                    return .json(
                        status: 201,
                        [
                            "client_id": id, "client_secret": secret, "client_secret_expires_at": 0,
                            "registration_access_token": access, "token_endpoint_auth_method": "client_secret_post",
                        ])
                }
            default:
                guard request.path == "/mcp" || request.path.hasPrefix("/mcp/") else {
                    return .json(status: 404, ["error": "not_found"])
                }
                let (bearer, refusal) = state.record.withLock { Self.presentedToken(request, origin: origin, in: &$0) }
                if let refusal { return refusal }
                let (audience, refuses, scopes, settings) = state.record.withLock { record in
                    if let bearer { record.bearers.append(bearer) }
                    return (
                        bearer.flatMap { record.accessTokens[$0] }, record.settings.refusesTokens,
                        bearer.flatMap { record.accessScopes[$0] } ?? [], record.settings
                    )
                }
                let metadata = #"resource_metadata="\#(origin)/.well-known/oauth-protected-resource/mcp""#
                guard let audience, audience == origin + "/mcp", !refuses else {
                    let scope = settings.challengeScope.map { #"scope="\#($0)", "# } ?? ""
                    let refusal = bearer == nil || settings.bareChallenge ? "" : #"error="invalid_token", "#
                    let challenge = "Bearer " + refusal + scope + metadata
                    return .json(status: 401, ["error": "invalid_token"], headers: [("www-authenticate", challenge)])
                }
                if !Set(settings.requiredScopes).isSubset(of: scopes) {
                    let needed = settings.requiredScopes.joined(separator: " ")
                    let challenge = #"Bearer error="insufficient_scope", scope="\#(needed)", "# + metadata
                    return .json(
                        status: 403, ["error": "insufficient_scope"], headers: [("www-authenticate", challenge)])
                }
                return .json(["audience": audience, "path": request.uri])
            }
        }

        private func authorize(_ query: [String: String], origin: String) -> FakeIdentityResponse {
            state.record.withLock { record in
                record.authorizeQueries.append(query)
                let query = query["request_uri"] == nil ? query : Self.pushedQuery(query, in: &record)
                // Any client id is taken here; the token endpoint decides whether it knows it (invalid_client).
                guard let client = query["client_id"], let redirect = query["redirect_uri"],
                    redirect.hasPrefix("http://127.0.0.1:"),
                    query["response_type"] == "code", query["code_challenge_method"] == "S256",
                    let challenge = query["code_challenge"], let resource = query["resource"]
                else { return .json(status: 400, ["error": "invalid_request"]) }
                var parameters: [(String, String)] = []
                var issuer: String? = origin
                switch record.settings.authorizeOutcome {
                case .deny:
                    parameters.append(("error", "access_denied"))
                case .approve, .wrongState, .wrongIssuer, .noIssuer:
                    record.counter += 1
                    let code = "code-\(record.counter)"
                    let granted = (query["scope"] ?? "").split(separator: " ").map(String.init)
                        .filter { !record.settings.withheldScopes.contains($0) }
                    record.codes[code] = (client, redirect, challenge, resource, granted.joined(separator: " "))
                    // RFC 9449 §10: the code is redeemed only with a proof of this key.
                    if let jkt = query["dpop_jkt"] { record.dpop.codes[code] = jkt }
                    parameters.append(("code", code))
                }
                let state = query["state"] ?? ""
                parameters.append(("state", record.settings.authorizeOutcome == .wrongState ? state + "x" : state))
                if record.settings.authorizeOutcome == .wrongIssuer { issuer = "http://127.0.0.1:1" }
                if record.settings.authorizeOutcome == .noIssuer { issuer = nil }
                if let issuer { parameters.append(("iss", issuer)) }
                let location = redirect + "?" + FormEncoding.encode(parameters)
                return FakeIdentityResponse(status: 302, headers: [("location", location)], body: [])
            }
        }

        /// The client id and secret of HTTP Basic (RFC 6749 §2.3.1: each form-encoded, then Base64).
        static func basic(_ request: FakeHTTPRequest) -> (id: String, secret: String)? {
            guard let value = request.headers.first(name: "authorization"), value.hasPrefix("Basic "),
                let data = Data(base64Encoded: String(value.dropFirst(6))),
                let pair = String(data: data, encoding: .utf8), let colon = pair.firstIndex(of: ":")
            else { return nil }
            func decoded(_ part: Substring) -> String {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            return (decoded(pair[..<colon]), decoded(pair[pair.index(after: colon)...]))
        }

        private func token(_ request: FakeHTTPRequest, origin: String) -> FakeIdentityResponse {
            let form = request.form
            let basic = Self.basic(request)
            return state.record.withLock { record in
                record.tokenForms.append(form)
                let proof = Self.checkProof(request, origin: origin, in: &record)
                if case .refused(let answer) = proof { return answer }
                let thumbprint = proof.thumbprint
                let method =
                    basic != nil ? "client_secret_basic" : form["client_secret"] != nil ? "client_secret_post" : "none"
                record.tokenAuthentications.append(method)
                guard !record.settings.refusesEveryClient, let client = basic?.id ?? form["client_id"],
                    record.clients.contains(client) || record.settings.preregistered.contains(client)
                        || record.settings.secrets[client] != nil || record.settings.metadataDocuments.contains(client)
                else { return .json(status: 401, ["error": "invalid_client"]) }
                if let secret = record.settings.secrets[client], secret != basic?.secret ?? form["client_secret"] {
                    return .json(status: 401, ["error": "invalid_client"])
                }
                let resource: String
                let scope: String
                switch form["grant_type"] {
                case "authorization_code":
                    if let code = form["code"], let bound = record.dpop.codes[code], bound != thumbprint {
                        return .json(
                            status: 400, ["error": "invalid_grant", "error_description": "bound to another key"])
                    }
                    guard let code = form["code"], let issued = record.codes.removeValue(forKey: code),
                        issued.client == client, issued.redirect == form["redirect_uri"],
                        let verifier = form["code_verifier"],
                        FakeIdentityGrants.codeChallenge(for: verifier) == issued.challenge,
                        issued.resource == form["resource"]
                    else { return .json(status: 400, ["error": "invalid_grant"]) }
                    resource = issued.resource
                    scope = issued.scope
                case "refresh_token":
                    // RFC 9449 §5: a public client's refresh token is bound to the key it was issued to.
                    if let old = form["refresh_token"], let bound = record.dpop.refreshTokens[old], bound != thumbprint
                    {
                        return .json(
                            status: 400, ["error": "invalid_grant", "error_description": "bound to another key"])
                    }
                    guard let old = form["refresh_token"], let issued = record.refreshTokens.removeValue(forKey: old),
                        issued.client == client, issued.resource == form["resource"]
                    else { return .json(status: 400, ["error": "invalid_grant"]) }
                    resource = issued.resource
                    scope = issued.scope  // a refresh keeps what was granted (RFC 6749 §6)
                default:
                    return .json(status: 400, ["error": "unsupported_grant_type"])
                }
                record.counter += 1
                var access = "at-\(record.counter)-\(UUID().uuidString)"
                let refresh = "rt-\(record.counter)-\(UUID().uuidString)"
                if let thumbprint {
                    // RFC 9449 §6.1: the binding, in the token itself.
                    access = FakeIdentityJWT.mint(claims: ["jti": access, "cnf": ["jkt": thumbprint]])
                    record.dpop.accessTokens[access] = thumbprint
                    record.dpop.refreshTokens[refresh] = thumbprint
                }
                record.accessTokens[access] = resource
                record.issued += [access, refresh]
                record.accessScopes[access] = Set(scope.split(separator: " ").map(String.init))
                record.refreshTokens[refresh] = (client, resource, scope)
                var response: [String: Any] = [
                    "access_token": access, "token_type": thumbprint == nil ? "Bearer" : "DPoP", "expires_in": 3600,
                    "refresh_token": refresh,
                ]
                if !record.settings.issuesRefreshTokens { response["refresh_token"] = nil }
                if !scope.isEmpty { response["scope"] = scope }
                return .json(response, headers: Self.nonceHeaders(record))
            }
        }
    }
}
