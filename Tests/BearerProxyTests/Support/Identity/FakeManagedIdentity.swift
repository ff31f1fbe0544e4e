import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A fake Azure managed identity endpoint on 127.0.0.1 (port chosen by the OS), checking what the real ones check.
///
/// - App Service (`GET /msi/token`, api-version 2019-08-01): `X-IDENTITY-HEADER` must equal the process's
///   `IDENTITY_HEADER` (else 401); a user-assigned identity is named by `client_id`, `object_id` or `mi_res_id`.
///   Errors are App Service's `{"statusCode", "message", "correlationId"}`; a token has `expires_on` only, as a
///   string of epoch seconds.
/// - Instance Metadata Service (`GET /metadata/identity/oauth2/token`, api-version 2018-02-01): `Metadata: true`
///   is required and a request with `X-Forwarded-For` is refused (IMDS's guards against forwarded requests); a
///   user-assigned identity is `client_id`, `object_id` or `msi_res_id`. Errors are OAuth-shaped (`error`,
///   `error_description`); a token has `expires_in` and `expires_on`, both strings.
///
/// Either way `resource` is required, and an identity that is not assigned to the "resource" — the system-assigned
/// one when `systemAssigned` is false, or an id not in `userAssigned` — gets 400 as on Azure.
final class FakeManagedIdentity: TestServer {
    enum Kind: Sendable {
        /// With the secret the platform put in `IDENTITY_HEADER`.
        case appService(secret: String)
        case imds
    }

    /// A user-assigned identity: any of its three ids names it.
    struct UserAssigned: Sendable {
        var clientID: String
        var objectID: String
        var resourceID: String
    }

    /// A request as it arrived, and what was answered.
    struct Recorded: Sendable {
        var method: HTTPMethod
        var path: String
        var query: [String: String]
        var headers: HTTPHeaders
        var status: Int
        /// The access token issued, for a 200.
        var token: String?
    }

    /// An answer the test forces on the next request, whatever it is.
    enum Forced: Sendable {
        case status(Int, retryAfter: Int?)
    }

    static let appServicePath = "/msi/token"
    static let imdsPath = "/metadata/identity/oauth2/token"
    static let appServiceVersion = "2019-08-01"
    static let imdsVersion = "2018-02-01"

    private let responder: Responder
    private let server: FakeEndpointServer
    private var state: State { responder.state }
    var kind: Kind { responder.kind }

    /// The shared, lock-guarded record (every connection's handler writes into it).
    final class State: Sendable {
        struct Data {
            var recorded: [Recorded] = []
            var forced: [Forced] = []
            var issued = 0
        }

        let data = Mutex(Data())
    }

    private init(responder: Responder, server: FakeEndpointServer) {
        self.responder = responder
        self.server = server
    }

    /// Starts an endpoint on 127.0.0.1:0. `now` dates App Service's `expires_on` (the proxy's clock in a test that
    /// moves time).
    static func start(
        _ kind: Kind, systemAssigned: Bool = true, userAssigned: [UserAssigned] = [], lifetime: TimeInterval = 86_400,
        now: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> FakeManagedIdentity {
        let state = State()
        let responder = Responder(
            kind: kind, systemAssigned: systemAssigned, userAssigned: userAssigned, lifetime: lifetime, now: now,
            state: state)
        let server = try await FakeEndpointServer.start(responder)
        return FakeManagedIdentity(responder: responder, server: server)
    }

    /// Stops listening and closes every connection. Idempotent.
    func shutdown() async {
        await server.shutdown()
    }

    /// The port it listens on (127.0.0.1).
    var port: Int { server.port }

    /// The endpoint's URL, as `IDENTITY_ENDPOINT` or `"endpoint"` names it.
    var endpoint: String {
        switch kind {
        case .appService: "http://127.0.0.1:\(server.port)\(Self.appServicePath)"
        case .imds: "http://127.0.0.1:\(server.port)\(Self.imdsPath)"
        }
    }

    var requests: [Recorded] { state.data.withLock { $0.recorded } }
    var tokenCount: Int { state.data.withLock { $0.recorded.filter { $0.token != nil }.count } }

    /// The next request gets `answer`, whatever it asks.
    func force(_ answer: Forced) {
        state.data.withLock { $0.forced.append(answer) }
    }

}

/// What the fake answers: the checks and the tokens. Called on the connections' event loops.
private struct Responder: FakeHTTPEndpoints {
    typealias Kind = FakeManagedIdentity.Kind

    let kind: Kind
    let systemAssigned: Bool
    let userAssigned: [FakeManagedIdentity.UserAssigned]
    /// The lifetime of the tokens it issues.
    let lifetime: TimeInterval
    let now: @Sendable () -> Date
    let state: FakeManagedIdentity.State

    var bodyTooLarge: FakeIdentityResponse { .json(status: 413, ["error": "request_too_large"]) }

    func answer(_ request: FakeHTTPRequest, respond: @escaping @Sendable (FakeIdentityResponse) -> Void) {
        respond(answer(request))
    }

    /// The answer to `request`, recorded.
    private func answer(_ request: FakeHTTPRequest) -> FakeIdentityResponse {
        let (status, body, headers) = reply(to: request)
        let token = status == 200 ? body["access_token"] as? String : nil
        state.data.withLock {
            $0.recorded.append(
                FakeManagedIdentity.Recorded(
                    method: request.method, path: request.path, query: request.query, headers: request.headers,
                    status: status, token: token))
        }
        return .json(status: status, body, headers: headers)
    }

    private func reply(to request: FakeHTTPRequest) -> (Int, [String: Any], [(String, String)]) {
        if let forced = state.data.withLock({ $0.forced.isEmpty ? nil : $0.forced.removeFirst() }) {
            switch forced {
            case .status(let status, let retryAfter):
                return (
                    status, refusal(status, "forced by the test"), retryAfter.map { [("retry-after", "\($0)")] } ?? []
                )
            }
        }
        let query = request.query
        typealias Fake = FakeManagedIdentity
        let path: String
        let version: String
        let resourceIDParameter: String
        switch kind {
        case .appService(let secret):
            (path, version, resourceIDParameter) = (Fake.appServicePath, Fake.appServiceVersion, "mi_res_id")
            guard request.headers.first(name: "x-identity-header") == secret else {
                return (401, refusal(401, "Unauthorized: missing or invalid X-IDENTITY-HEADER"), [])
            }
        case .imds:
            (path, version, resourceIDParameter) = (Fake.imdsPath, Fake.imdsVersion, "msi_res_id")
            guard request.headers.first(name: "metadata")?.lowercased() == "true" else {
                return (400, refusal(400, "Required metadata header not specified"), [])
            }
            guard !request.headers.contains(name: "x-forwarded-for") else {
                return (400, refusal(400, "Request contains X-Forwarded-For header"), [])
            }
        }
        guard request.path == path else { return (404, refusal(404, "Not found: \(request.path)"), []) }
        guard request.method == .GET else { return (405, refusal(405, "Method not allowed"), []) }
        guard query["api-version"] == version else {
            return (400, refusal(400, "api-version \(query["api-version"] ?? "(none)") is not supported"), [])
        }
        guard let resource = query["resource"], !resource.isEmpty else {
            return (400, refusal(400, "Required audience parameter not specified"), [])
        }
        let asked = [
            query["client_id"].map { id in userAssigned.first { $0.clientID == id } },
            query["object_id"].map { id in userAssigned.first { $0.objectID == id } },
            query[resourceIDParameter].map { id in userAssigned.first { $0.resourceID == id } },
        ].compactMap { $0 }
        guard asked.count <= 1 else { return (400, refusal(400, "Specify only one identity"), []) }
        let identity: String
        if let choice = asked.first {
            guard let found = choice else { return (400, refusal(400, "Identity not found"), []) }
            identity = found.clientID
        } else {
            guard systemAssigned else { return (400, refusal(400, "Identity not found"), []) }
            identity = "system"
        }
        let number = state.data.withLock { data -> Int in
            data.issued += 1
            return data.issued
        }
        let expiresOn = Int(now().timeIntervalSince1970 + lifetime)
        var body: [String: Any] = [
            "access_token": "mi-token-\(number)-\(identity)", "expires_on": "\(expiresOn)", "resource": resource,
            "token_type": "Bearer", "client_id": identity,
        ]
        if case .imds = kind {
            body["expires_in"] = "\(Int(lifetime))"
            body["ext_expires_in"] = "\(Int(lifetime))"
            body["not_before"] = "\(Int(now().timeIntervalSince1970))"
        }
        return (200, body, [])
    }

    /// An error body in the protocol's shape.
    private func refusal(_ status: Int, _ message: String) -> [String: Any] {
        switch kind {
        case .appService:
            ["statusCode": status, "message": message, "correlationId": "00000000-0000-0000-0000-000000000000"]
        case .imds:
            ["error": status == 400 ? "invalid_request" : "server_error", "error_description": message]
        }
    }
}

/// Runs `body` with a fake managed identity endpoint, shutting it down afterwards whatever happens.
func withManagedIdentity<T>(
    _ kind: FakeManagedIdentity.Kind, systemAssigned: Bool = true,
    userAssigned: [FakeManagedIdentity.UserAssigned] = [],
    lifetime: TimeInterval = 86_400, now: @escaping @Sendable () -> Date = { Date() },
    _ body: (FakeManagedIdentity) async throws -> T
) async throws -> T {
    try await FakeManagedIdentity.using(
        try await FakeManagedIdentity.start(
            kind, systemAssigned: systemAssigned, userAssigned: userAssigned, lifetime: lifetime, now: now),
        body)
}
