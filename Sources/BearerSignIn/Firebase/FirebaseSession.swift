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

/// What a Firebase sign-in answered (`signInWithIdp`'s VerifyAssertionResponse or `signInWithPassword`'s
/// VerifyPasswordResponse — docs/firebase.md §1): the Firebase tokens, and for Microsoft the provider's tokens.
struct FirebaseSession: Sendable {
    var localId: String
    var email: String?
    package var displayName: String?
    var idToken: String
    package var refreshToken: String
    var expiresIn: TimeInterval
    var microsoftAccessToken: String?
    var microsoftExpiresIn: TimeInterval?
    var microsoftIDToken: String?

    /// Decodes a successful answer; nil when it carries no Firebase tokens.
    init?(_ object: [String: Any]) {
        guard let localId = object["localId"] as? String, let idToken = object["idToken"] as? String,
            let refreshToken = object["refreshToken"] as? String
        else { return nil }
        self.localId = localId
        self.idToken = idToken
        self.refreshToken = refreshToken
        email = object["email"] as? String
        displayName = object["displayName"] as? String
        // `expiresIn` is a string ("3600"); `oauthExpireIn` a number in the spec and a string in the iOS SDK.
        expiresIn = TokenResponse.seconds(object["expiresIn"]) ?? 3600
        microsoftAccessToken = object["oauthAccessToken"] as? String
        microsoftExpiresIn = TokenResponse.seconds(object["oauthExpireIn"])
        microsoftIDToken = object["oauthIdToken"] as? String
    }

    /// Who signed in: the Firebase uid and email, and from Microsoft's id token its `oid` and `tid` — never
    /// `sub`, which Microsoft makes different for every app (the seed's warning).
    package var identity: AccountIdentity {
        let microsoft = microsoftIDToken.flatMap(IDToken.identity)
        return AccountIdentity(
            name: displayName ?? microsoft?.name, username: email ?? microsoft?.username,
            objectID: microsoftIDToken.flatMap { IDToken.claim("oid", in: $0) },
            tenantID: microsoft?.tenantID, firebaseUID: localId)
    }

    /// The tokens for the routes: the ID token, and the Microsoft token when there is one (`scopes` are the
    /// account's, which every `provider-access` route's are a subset of).
    package func tokens(microsoftScopes: ScopeSet?, at now: Date) -> [AccessToken] {
        var tokens = [
            AccessToken(
                value: idToken, scopes: FirebaseTokenKind.idToken.key, expiresOn: now.addingTimeInterval(expiresIn),
                issuedAt: now)
        ]
        if let microsoftAccessToken {
            // Firebase passes no Microsoft refresh token: this one lives its hour and is never refreshed.
            let expiresOn = now.addingTimeInterval(microsoftExpiresIn ?? 3599)
            tokens.append(
                AccessToken(
                    value: microsoftAccessToken, scopes: FirebaseTokenKind.providerAccess.key,
                    grantedScopes: microsoftScopes?.scopes, expiresOn: expiresOn, refreshOn: expiresOn, issuedAt: now))
        }
        return tokens
    }
}
