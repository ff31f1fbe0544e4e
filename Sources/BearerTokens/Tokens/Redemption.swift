import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// What one redemption of the account's refresh token produced (RFC 6749 §6).
package struct Redemption: Sendable {
    package var accessToken: AccessToken
    /// The refresh token to use from now on: the rotated one the provider sent, else the one redeemed.
    package var refreshToken: String
    /// Who is signed in, when the answer carried an id token.
    package var identity: AccountIdentity?

    /// Redeems `refreshToken`; when the provider answers that it is no longer good (`invalid_grant` and the like)
    /// and `latest` — where the newest refresh token is kept — now holds another one, redeems that one, once.
    ///
    /// Another process, or another request of this one, may have rotated the token after it was read; a provider
    /// that rotates without a grace period then refuses the old one. Only when the newest token fails too is the
    /// account signed out (SPEC §7 "Several processes, one account").
    package static func redeemingLatest(
        _ refreshToken: String, latest: () async -> String?,
        redeem: (String) async throws(TokenError) -> Redemption
    ) async throws(TokenError) -> Redemption {
        do {
            return try await redeem(refreshToken)
        } catch {
            guard case .signInRequired = error, let newer = await latest(), newer != refreshToken else { throw error }
            return try await redeem(newer)
        }
    }

    package init(accessToken: AccessToken, refreshToken: String, identity: AccountIdentity? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.identity = identity
    }
}
