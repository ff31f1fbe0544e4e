import Foundation
import Testing

/// The one guard on the fakes themselves: the product's sign-in tests trust that ``FakeIdentityProvider`` and
/// ``FakeFirebase`` answer in the wire format of shared/docs/protocols.md, so each documented exchange is played here
/// with plain HTTP and its answer checked for the documented status and keys. What the fakes do beyond that is
/// tested through the product.
@Suite("Fake servers: the wire format of protocols.md")
struct FakeWireFormatTests {
    /// One documented exchange: the requests that lead to it, and what its answer must carry.
    struct Exchange: Sendable, CustomTestStringConvertible {
        /// The section of protocols.md and the exchange.
        var name: String
        var status: Int
        /// Keys the JSON answer has; `a.b` is key `b` of the object at `a`.
        var keys: [String]
        /// Keys whose value is a string (Firebase's `expiresIn` is "3600", not 3600).
        var strings: [String] = []
        var send: @Sendable (FakeIdentityProvider, FakeFirebase) async throws -> TestResponse

        var testDescription: String { name }
    }

    static let clientID = FakeIdentityProvider.Client.publicClientID
    static let apiScope = "api://todo/ToDoList.Read"
    static let native = "/contoso/oauth2/v2.0"

    static let exchanges: [Exchange] = [
        Exchange(name: "§1.1 initiate", status: 200, keys: ["continuation_token"]) { idp, _ in
            try await initiate(idp)
        },
        Exchange(name: "§1.1 challenge", status: 200, keys: ["continuation_token", "challenge_type"]) { idp, _ in
            try await challenge(idp, try continuation(try await initiate(idp)))
        },
        Exchange(
            name: "§1.1 password grant", status: 200,
            keys: ["token_type", "scope", "expires_in", "access_token", "refresh_token", "id_token", "client_info"]
        ) { idp, _ in
            try await passwordGrant(idp, password: FakeIdentityProvider.User.alicePassword)
        },
        Exchange(
            name: "§1.2 wrong password", status: 400,
            keys: ["error", "error_description", "error_codes", "timestamp", "trace_id", "correlation_id"]
        ) { idp, _ in
            try await passwordGrant(idp, password: "wrong")
        },
        Exchange(
            name: "§2 refresh_token grant", status: 200,
            keys: ["token_type", "scope", "expires_in", "access_token", "refresh_token"]
        ) { idp, _ in
            try await form(
                idp.port, "\(native)/token",
                [
                    ("client_id", clientID), ("grant_type", "refresh_token"),
                    ("refresh_token", idp.issueRefreshToken(for: .alice)), ("scope", "\(apiScope) offline_access"),
                ])
        },
        Exchange(
            name: "§3 device authorization", status: 200,
            keys: ["device_code", "user_code", "verification_uri", "expires_in", "interval", "message"]
        ) { idp, _ in
            try await form(idp.port, "\(native)/devicecode", [("client_id", clientID), ("scope", apiScope)])
        },
        Exchange(name: "§3 poll before approval", status: 400, keys: ["error", "error_codes"]) { idp, _ in
            let issued = try await form(
                idp.port, "\(native)/devicecode", [("client_id", clientID), ("scope", apiScope)])
            let deviceCode = try #require(try issued.jsonObject()["device_code"] as? String)
            return try await form(
                idp.port, "\(native)/token",
                [
                    ("client_id", clientID), ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    ("device_code", deviceCode),
                ])
        },
        Exchange(
            name: "§6 discovery", status: 200,
            keys: ["issuer", "authorization_endpoint", "token_endpoint", "device_authorization_endpoint"]
        ) { idp, _ in
            try await TestClient.send(port: idp.port, uri: "/contoso/v2.0/.well-known/openid-configuration")
        },
        Exchange(name: "§7 createAuthUri", status: 200, keys: ["authUri", "sessionId", "providerId"]) {
            _, firebase in
            try await json(
                firebase.port, firebase.accountsPath("createAuthUri"),
                [
                    "providerId": "microsoft.com", "continueUri": "http://localhost:8975/callback",
                    "oauthScope": "User.Read",
                ])
        },
        Exchange(
            name: "§7 signInWithPassword", status: 200,
            keys: ["kind", "localId", "email", "idToken", "registered", "refreshToken", "expiresIn"],
            strings: ["expiresIn"]
        ) { _, firebase in
            _ = firebase.addPasswordUser(email: "carol@contoso.example", password: "s3cret")
            return try await json(
                firebase.port, firebase.accountsPath("signInWithPassword"),
                ["email": "carol@contoso.example", "password": "s3cret", "returnSecureToken": true])
        },
        Exchange(
            name: "§7 error envelope", status: 400, keys: ["error.code", "error.message", "error.errors"]
        ) { _, firebase in
            try await json(
                firebase.port, firebase.accountsPath("signInWithPassword"),
                ["email": "nobody@contoso.example", "password": "x", "returnSecureToken": true])
        },
        Exchange(
            name: "§7 refresh as a form", status: 200, keys: secureTokenKeys, strings: ["expires_in"]
        ) { _, firebase in
            try await form(
                firebase.port, firebase.secureTokenPath,
                [("grant_type", "refresh_token"), ("refresh_token", try firebaseRefreshToken(firebase))])
        },
        Exchange(
            name: "§7 refresh as JSON (iOS SDK)", status: 200, keys: secureTokenKeys, strings: ["expires_in"]
        ) { _, firebase in
            try await json(
                firebase.port, firebase.secureTokenPath,
                ["grantType": "refresh_token", "refreshToken": try firebaseRefreshToken(firebase)])
        },
    ]

    static let secureTokenKeys = [
        "access_token", "expires_in", "token_type", "refresh_token", "id_token", "user_id", "project_id",
    ]

    @Test("each documented exchange: its status and keys", arguments: exchanges)
    func documentedAnswer(_ exchange: Exchange) async throws {
        try await withIdentityProvider { idp in
            try await FirebaseHarness.withFirebase { firebase in
                let response = try await exchange.send(idp, firebase)
                #expect(Int(response.status.code) == exchange.status, "\(response.bodyText)")
                let answer = try response.jsonObject()
                for key in exchange.keys {
                    #expect(Self.value(at: key, in: answer) != nil, "\(key) missing from \(response.bodyText)")
                }
                for key in exchange.strings {
                    #expect(Self.value(at: key, in: answer) is String, "\(key) is not a string")
                }
            }
        }
    }

    // MARK: - Requests

    static func form(_ port: Int, _ path: String, _ pairs: [(String, String)]) async throws -> TestResponse {
        try await TestClient.send(
            port: port, method: "POST", uri: path, headers: [("content-type", "application/x-www-form-urlencoded")],
            body: .text(FakeIdentityForm.encode(pairs)))
    }

    static func json(_ port: Int, _ path: String, _ object: [String: Any]) async throws -> TestResponse {
        let body = try JSONSerialization.data(withJSONObject: object)
        return try await TestClient.send(
            port: port, method: "POST", uri: path, headers: [("content-type", "application/json")],
            body: .bytes(Array(body)))
    }

    static func initiate(_ idp: FakeIdentityProvider) async throws -> TestResponse {
        try await form(
            idp.port, "\(native)/initiate",
            [
                ("client_id", clientID), ("username", FakeIdentityProvider.User.alice.preferredUsername),
                ("challenge_type", "password redirect"),
            ])
    }

    static func challenge(_ idp: FakeIdentityProvider, _ token: String) async throws -> TestResponse {
        try await form(
            idp.port, "\(native)/challenge",
            [("client_id", clientID), ("continuation_token", token), ("challenge_type", "password redirect")])
    }

    static func continuation(_ response: TestResponse) throws -> String {
        try #require(try response.jsonObject()["continuation_token"] as? String)
    }

    /// initiate → challenge → the password grant, as the SDK sends it.
    static func passwordGrant(_ idp: FakeIdentityProvider, password: String) async throws -> TestResponse {
        let token = try continuation(try await challenge(idp, try continuation(try await initiate(idp))))
        return try await form(
            idp.port, "\(native)/token",
            [
                ("client_id", clientID), ("continuation_token", token), ("grant_type", "password"),
                ("username", FakeIdentityProvider.User.alice.preferredUsername), ("password", password),
                ("scope", "\(apiScope) openid profile offline_access"), ("client_info", "true"),
                ("challenge_type", "password redirect"),
            ])
    }

    static func firebaseRefreshToken(_ firebase: FakeFirebase) throws -> String {
        let uid = firebase.addPasswordUser(email: "erin@contoso.example", password: "pw")
        return try #require(firebase.issueTokens(for: uid)?.refreshToken)
    }

    /// The value at a dotted `path` of a JSON object.
    static func value(at path: String, in object: [String: Any]) -> Any? {
        var current: Any? = object
        for key in path.split(separator: ".") {
            current = (current as? [String: Any])?[String(key)]
        }
        return current
    }
}
