import AsyncHTTPClient
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Calls to Firebase Auth's REST API (Identity Toolkit v1 and securetoken) on the control plane's HTTP client.
/// The API key goes in the `x-goog-api-key` header, not the URL, so no log line or error ever shows it.
package struct FirebaseClient: Sendable {
    package let provider: IdentityProviderClient
    package let endpoints: FirebaseEndpoints
    let apiKey: String

    /// POSTs JSON to an `accounts:` method; the JSON object answered, or the failure.
    func accounts(_ method: String, _ body: [String: Any]) async throws(FirebaseCallFailure) -> [String: Any] {
        let data = JSONObject.data(body) ?? Data()
        return try await post(endpoints.accounts(method), body: data, contentType: "application/json")
    }

    /// The refresh grant at securetoken, form-encoded as Firebase's REST reference documents it.
    func refresh(_ refreshToken: String) async throws(FirebaseCallFailure) -> [String: Any] {
        let form = FormEncoding.encode([("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
        return try await post(
            endpoints.secureToken, body: Data(form.utf8), contentType: "application/x-www-form-urlencoded")
    }

    private func post(_ url: String, body: Data, contentType: String) async throws(FirebaseCallFailure) -> [String:
        Any]
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: contentType)
        request.headers.add(name: "accept", value: "application/json")
        request.headers.add(name: "x-goog-api-key", value: apiKey)
        request.body = .bytes(ByteBuffer(bytes: body))
        let answer: (status: Int, headers: HTTPHeaders, body: Data)
        do {
            answer = try await provider.send(request)
        } catch {
            throw .unreachable(error)
        }
        if answer.status == 200, let object = JSONObject.dictionary(answer.body) {
            return object
        }
        let retryAfter = RetryAfter.seconds(answer.headers.first(name: "retry-after"))
        throw .rejected(FirebaseFailure(status: answer.status, json: answer.body, retryAfter: retryAfter))
    }

    package init(provider: IdentityProviderClient, endpoints: FirebaseEndpoints, apiKey: String) {
        self.provider = provider
        self.endpoints = endpoints
        self.apiKey = apiKey
    }
}

/// Why a Firebase call produced no answer: unreachable, or an error answer.
enum FirebaseCallFailure: Error {
    case unreachable(TokenError)
    case rejected(FirebaseFailure)
}

/// Where the Firebase Auth REST API lives: Google's hosts, or the Auth emulator, which serves the same paths
/// prefixed with the real host name (`http://127.0.0.1:9099/identitytoolkit.googleapis.com/v1/…`), or the same
/// layout under `apiBaseURL`.
package struct FirebaseEndpoints: Sendable, Equatable {
    let identityToolkit: String
    let secureToken: String

    package init(emulator: ListenAddress?, base apiBaseURL: String? = nil) {
        let base = emulator.map { "http://\($0)/" } ?? apiBaseURL.map { $0 + "/" } ?? "https://"
        identityToolkit = base + "identitytoolkit.googleapis.com/v1/accounts:"
        secureToken = base + "securetoken.googleapis.com/v1/token"
    }

    /// `accounts:createAuthUri`, `accounts:signInWithIdp`, `accounts:signInWithPassword`.
    func accounts(_ method: String) -> String { identityToolkit + method }
}
