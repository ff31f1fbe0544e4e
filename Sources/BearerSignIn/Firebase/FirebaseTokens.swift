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

/// The `firebase` flow's side of the token engine: the Firebase ID token comes from the refresh token through
/// securetoken (docs/firebase.md §2); the Microsoft token cannot be renewed through Firebase, so once it expires
/// the route answers 401 "run: bearer-proxy login" without contacting the upstream.
package struct FirebaseTokens: SignInFlow {
    package let name = "firebase"
    package let client: FirebaseClient
    package let session: AccountSession
    package let now: @Sendable () -> Date

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        switch FirebaseTokenKind(key: request.scopes) {
        case .idToken?:
            return try await refreshIDToken()
        case .providerAccess?:
            throw .signInRequired(
                reason: "The Microsoft access token from the Firebase sign-in has expired, and Firebase cannot renew "
                    + "it.")
        case nil:
            throw .misconfigured(reason: "the firebase flow serves only \"firebase-id\" and \"provider-access\" routes")
        }
    }

    private func refreshIDToken() async throws(TokenError) -> AccessToken {
        guard let refreshToken = session.refreshToken else { throw .signInRequired(reason: "Not signed in.") }
        let issued = now()
        let answer: [String: Any]
        do {
            answer = try await client.refresh(refreshToken)
        } catch {
            switch error {
            case .unreachable(let error): throw error
            case .rejected(let failure): throw failure.tokenError
            }
        }
        guard let idToken = (answer["id_token"] as? String) ?? (answer["access_token"] as? String) else {
            throw .providerUnavailable(reason: "securetoken answered without an id_token", retryAfterSeconds: 5)
        }
        session.update(refreshToken: answer["refresh_token"] as? String, identity: nil)
        let expiresIn = TokenResponse.seconds(answer["expires_in"]) ?? 3600
        return AccessToken(
            value: idToken, scopes: FirebaseTokenKind.idToken.key, expiresOn: issued.addingTimeInterval(expiresIn),
            issuedAt: issued)
    }

    package init(client: FirebaseClient, session: AccountSession, now: @escaping @Sendable () -> Date) {
        self.client = client
        self.session = session
        self.now = now
    }
}
