import Foundation

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Accounts for the token store tests, with recognisable fake secrets so tests can look for leaks.
enum StoreSamples {
    static let refreshToken = "RT-secret-0.AAAA-refresh-token-value"
    static let graphTokenValue = "eyJ-secret-graph-access-token"
    static let todoTokenValue = "eyJ-secret-todo-access-token"

    /// Dates on whole milliseconds, so an account compares equal after a round trip through the file.
    static let now = Date(timeIntervalSince1970: 1_763_790_000.123)

    static var account: PersistedAccount {
        PersistedAccount(
            flow: "refresh-token",
            identity: AccountIdentity(
                name: "Ada Lovelace", username: "ada@contoso.com", objectID: "00000000-0000-0000-0000-0000000000a1",
                tenantID: "00000000-0000-0000-0000-0000000000b2"),
            refreshToken: refreshToken,
            accessTokens: [
                PersistedAccessToken(
                    scopes: ["User.Read"], grantedScopes: ["User.Read", "profile", "openid"], value: graphTokenValue,
                    expiresOn: now.addingTimeInterval(3600), refreshOn: now.addingTimeInterval(1800)),
                PersistedAccessToken(
                    scopes: ["api://todo/ToDoList.ReadWrite", "api://todo/ToDoList.Read"],
                    grantedScopes: ["api://todo/ToDoList.Read", "api://todo/ToDoList.ReadWrite"],
                    value: todoTokenValue, expiresOn: now.addingTimeInterval(4000),
                    refreshOn: now.addingTimeInterval(2000), claimsHash: "c1a1m5"),
            ],
            updatedAt: now)
    }

    static var secrets: [String] { [refreshToken, graphTokenValue, todoTokenValue] }
}
