/// What a sign-in produced: the account's refresh token and, from the id token, who it is.
public struct SignedInAccount: Sendable {
    public var refreshToken: String
    public var identity: AccountIdentity?
    /// Tokens the sign-in itself produced for the routes (Firebase's ID token and Microsoft token); empty when
    /// every token comes from the refresh token.
    public var tokens: [AccessToken] = []

    init(refreshToken: String, identity: AccountIdentity?, tokens: [AccessToken]) {
        self.refreshToken = refreshToken
        self.identity = identity
        self.tokens = tokens
    }
}
