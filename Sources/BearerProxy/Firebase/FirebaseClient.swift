import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Calls to Firebase Auth's REST API (Identity Toolkit v1 and securetoken) on the control plane's HTTP client.
/// The API key goes in the `x-goog-api-key` header, not the URL, so no log line or error ever shows it.
struct FirebaseClient: Sendable {
    let provider: IdentityProviderClient
    let endpoints: FirebaseEndpoints
    let apiKey: String

    /// POSTs JSON to an `accounts:` method; the JSON object answered, or the failure.
    func accounts(_ method: String, _ body: [String: Any]) async throws(FirebaseCallFailure) -> [String: Any] {
        let data = (try? JSONSerialization.data(withJSONObject: body)) ?? Data()
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
        if answer.status == 200, let object = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] {
            return object
        }
        let retryAfter = answer.headers.first(name: "retry-after").flatMap { Int($0) }
        throw .rejected(FirebaseFailure(status: answer.status, json: answer.body, retryAfter: retryAfter))
    }
}

/// Why a Firebase call produced no answer: unreachable, or an error answer.
enum FirebaseCallFailure: Error {
    case unreachable(TokenError)
    case rejected(FirebaseFailure)
}
