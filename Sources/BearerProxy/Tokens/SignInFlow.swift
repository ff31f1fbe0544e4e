/// The interface every sign-in flow implements: given a scope set, produce an access token for it.
///
/// The data plane never talks to a flow directly; it asks the ``TokenCache``, which owns the cached tokens and
/// makes sure a flow sees one request per scope set however many requests are waiting (SPEC §7).
public protocol SignInFlow: Sendable {
    /// The flow's name as written in `routes.json` (`dev`, `client-credentials`, …), for logs and `status`.
    var name: String { get }

    /// Obtains a fresh access token from the identity provider (or, for `dev`, mints one).
    func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken
}
