import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The account's refresh token as the processes sharing its token cache file use it (SPEC §7 "Several processes,
/// one account"): redeeming it is a critical section across processes.
///
/// Under the ``RedemptionLock`` a process reads the file again and takes over what another process has already
/// obtained — a rotated refresh token, a usable access token for the scope set — and redeems only when nothing
/// usable is there, writing the outcome before it lets go. An identity provider that rotates refresh tokens then
/// sees each one redeemed once, and each scope set is asked for once per machine rather than once per process.
/// (`--no-persist` processes have no file and no share in this: they are on their own.)
package struct SharedRefreshToken: Sendable {
    package let persistence: TokenPersistence
    let lock: RedemptionLock
    package let session: AccountSession
    package let logger: Logger
    package let now: @Sendable () -> Date

    /// Whether the refresh token in memory is the one shared through the file. It is not while `login` holds its
    /// sign-in back until its one write: the new refresh token is this process's alone until then, and the file
    /// still holds the previous account, which must not be taken over.
    package var isShared: Bool { !persistence.isHoldingSession }

    /// A token for `request`: one another process stored, else one redeemed here — under the lock either way.
    package func accessToken(
        for request: TokenRequest, redeem: (String) async throws(TokenError) -> Redemption
    ) async throws(TokenError) -> AccessToken {
        let waiting = {
            logger.info(
                "another bearer-proxy process is redeeming the refresh token; waiting for it",
                metadata: ["scopes": "\(request.scopes)"])
        }
        return try await lock.withLock(waiting: waiting) {
            outcome async throws(TokenError) -> AccessToken in
            if outcome == .cancelled {
                // A shutdown: going on without the lock could retire the refresh token under another process.
                throw .providerUnavailable(
                    reason: "cancelled while waiting for the redemption lock", retryAfterSeconds: 1)
            }
            if outcome != .held {
                logger.warning("redeeming the refresh token without the token cache's redemption lock: \(outcome)")
            }
            return try await underLock(request, redeem: redeem)
        }
    }

    private func underLock(
        _ request: TokenRequest, redeem: (String) async throws(TokenError) -> Redemption
    ) async throws(TokenError) -> AccessToken {
        let (stored, file) = await persistence.storedAccount()
        // Another process rotated it (or signed in or out): the one in memory may already be retired — unless it is
        // the newer one, rotated here and not yet written (SessionAdoption).
        session.reconcile(with: file)
        if request.claims == nil, let stored, let token = Self.fresh(in: stored, for: request.scopes, at: now()) {
            return token
        }
        guard let refreshToken = session.refreshToken else { throw .signInRequired(reason: "Not signed in.") }
        let redemption = try await Redemption.redeemingLatest(
            refreshToken,
            latest: {
                session.reconcile(with: await persistence.storedAccount().session)
                return session.refreshToken
            }, redeem: redeem)
        session.rotated(refreshToken: redemption.refreshToken, identity: redemption.identity)
        await persistence.recordRedemption(of: session, token: redemption.accessToken)
        return redemption.accessToken
    }

    /// A token in the file that serves `scopes` and is not yet due for refresh — one that is due would be asked
    /// for again at once by the background refresh that may be the caller.
    package static func fresh(in account: PersistedAccount, for scopes: ScopeSet, at now: Date) -> AccessToken? {
        let tokens = account.accessTokens.map(TokenPersistence.accessToken).filter {
            $0.isUsable(at: now) && $0.refreshOn > now
        }
        return tokens.first { $0.scopes == scopes } ?? tokens.first { $0.covers(scopes) }
    }

    package init(
        persistence: TokenPersistence, lock: RedemptionLock, session: AccountSession, logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        self.persistence = persistence
        self.lock = lock
        self.session = session
        self.logger = logger
        self.now = now
    }
}
