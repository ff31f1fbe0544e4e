import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How the in-memory token types map to the token cache file's, and how one stored token joins the others.
extension TokenPersistence {
    /// Puts `token` in place of the file's token for its scope set — unless that one lasts longer (another process
    /// stored it after this token was obtained).
    static func merge(_ token: AccessToken, into account: inout PersistedAccount) {
        let persisted = persisted(token)
        guard let index = account.accessTokens.firstIndex(where: { $0.scopes == persisted.scopes }) else {
            account.accessTokens.append(persisted)
            return
        }
        if account.accessTokens[index].expiresOn <= persisted.expiresOn { account.accessTokens[index] = persisted }
    }

    static func persisted(_ token: AccessToken) -> PersistedAccessToken {
        PersistedAccessToken(
            scopes: token.scopes.scopes, grantedScopes: token.grantedScopes.sorted(), value: token.value,
            expiresOn: token.expiresOn, refreshOn: token.refreshOn, boundKey: token.boundKey)
    }

    package static func accessToken(_ persisted: PersistedAccessToken) -> AccessToken {
        AccessToken(
            value: persisted.value, scopes: ScopeSet(persisted.scopes), grantedScopes: persisted.grantedScopes,
            expiresOn: persisted.expiresOn, refreshOn: persisted.refreshOn,
            // The file keeps no issue time: the refresh point is the half-life unless the provider said otherwise.
            issuedAt: persisted.refreshOn.addingTimeInterval(
                -persisted.expiresOn.timeIntervalSince(persisted.refreshOn)),
            boundKey: persisted.boundKey)
    }

    static func snapshot(of account: PersistedAccount) -> AccountSession.Snapshot {
        AccountSession.Snapshot(refreshToken: account.refreshToken, identity: account.identity)
    }

    /// Puts memory's session into the file's account (an empty one — a sign-out — deletes the file) and returns
    /// the refresh-token generation written: one above the file's when the token differs from the file's, never
    /// below memory's (which already counts its own change), so the file's generation only grows.
    static func put(_ record: AccountSession.Record, into stored: inout PersistedAccount?, flowName: String)
        -> Int
    {
        guard record.snapshot != AccountSession.Snapshot() else {
            stored = nil
            return record.generation
        }
        let before = stored
        var account = stored ?? PersistedAccount(flow: flowName, updatedAt: Date())
        let fileGeneration = account.refreshTokenGeneration ?? 0
        let generation =
            account.refreshToken == record.snapshot.refreshToken
            ? max(fileGeneration, record.generation) : max(fileGeneration + 1, record.generation)
        account.refreshToken = record.snapshot.refreshToken
        account.identity = record.snapshot.identity
        account.refreshTokenGeneration = generation > 0 ? generation : nil
        if account != before { account.updatedAt = Date() }
        stored = account
        return generation
    }
}
