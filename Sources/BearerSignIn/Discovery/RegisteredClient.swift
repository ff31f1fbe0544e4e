import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What dynamic registration returned (RFC 7591 §3.2.1): the client id, and a secret if the server insisted on
/// one despite `token_endpoint_auth_method: none`. Never printed with its secret.
struct RegisteredClient: Sendable, Equatable, CustomStringConvertible {
    public var clientID: String
    /// Stored with the registration for the token requests; `description` never shows it.
    package var clientSecret: String?
    /// `client_secret_expires_at` (seconds since 1970; 0 = never), when a secret was issued.
    var secretExpiresAt: Int?

    public var description: String {
        "RegisteredClient(\(clientID)\(clientSecret == nil ? "" : ", secret: <redacted>"))"
    }

    private struct Success: Decodable {
        var clientID: String
        var clientSecret: String?
        var secretExpiresAt: Int?

        enum CodingKeys: String, CodingKey {
            case clientID = "client_id"
            case clientSecret = "client_secret"
            case secretExpiresAt = "client_secret_expires_at"
        }
    }

    private struct Failure: Decodable {
        var error: String
        var errorDescription: String?

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }

    /// The registration answer decoded: the client, or why there is none (RFC 7591 §3.2.2).
    package static func decode(status: Int, body: [UInt8], endpoint: String) throws(DiscoveryError) -> RegisteredClient
    {
        let decoder = JSONDecoder()
        if status == 201 || status == 200 {
            guard let success = try? decoder.decode(Success.self, from: Data(body)), !success.clientID.isEmpty else {
                throw .registrationRefused(
                    endpoint: endpoint, reason: "HTTP \(status) without a client_id (RFC 7591 §3.2.1)")
            }
            return RegisteredClient(
                clientID: success.clientID, clientSecret: success.clientSecret, secretExpiresAt: success.secretExpiresAt
            )
        }
        if let failure = try? decoder.decode(Failure.self, from: Data(body)) {
            let description = failure.errorDescription.map { ": \($0)" } ?? ""
            throw .registrationRefused(endpoint: endpoint, reason: "HTTP \(status), \(failure.error)\(description)")
        }
        throw .registrationRefused(endpoint: endpoint, reason: "HTTP \(status)")
    }

    init(clientID: String, clientSecret: String? = nil, secretExpiresAt: Int? = nil) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.secretExpiresAt = secretExpiresAt
    }
}
