import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A pushed authorization request (RFC 9126): the authorization request's parameters are POSTed to the server
/// first, with the client's authentication as at its token endpoint (§2), and the browser is then sent with only the
/// `client_id` and the `request_uri` the server handed back (§4).
///
/// Why a discovered route's sign-in pushes whenever the server offers it: a server that no longer knows the client
/// says so to the push at once (`invalid_client`, §2.3) — the sign-in registers again without a browser — whereas at
/// the authorization endpoint it shows the person an error page and, rightly (RFC 6749 §4.1.2.1), never redirects.
enum PushedAuthorizationRequest {
    /// Why a push handed back no `request_uri`.
    enum Refusal: Error {
        /// The server answered with an OAuth error (§2.3): `invalid_client`, `invalid_request`, …
        case rejected(TokenEndpointFailure)
        /// No answer, or one that is not a pushed request's.
        case failed(SignInFailure)
    }

    /// The form of the push: the authorization request's `parameters` (which name the `client_id`, RFC 9126 §2.1)
    /// and, for `client_secret_post`, the secret; `client_secret_basic` goes in the header instead
    /// (``DiscoveredClient/basicCredentials``).
    static func form(_ parameters: [(String, String)], client: DiscoveredClient) -> [(String, String)] {
        guard client.authentication == .post, let secret = client.secret else { return parameters }
        return parameters + [("client_secret", secret)]
    }

    /// Pushes `parameters` to `endpoint` (already judged by the route's address policy) and returns the
    /// `request_uri` (§2.2: `201` with `request_uri` and `expires_in`). With `dpop`, the push carries a proof of the
    /// sign-in's key, to which the server binds the authorization code (RFC 9449 §10.1).
    static func push(
        _ parameters: [(String, String)], to endpoint: PinnedURL, client: DiscoveredClient,
        provider: IdentityProviderClient, dpop: DPoPBinding? = nil
    ) async throws(Refusal) -> String {
        let answer: (status: Int, headers: HTTPHeaders, body: Data)
        do {
            answer = try await provider.postForm(
                to: endpoint, form: form(parameters, client: client), basicCredentials: client.basicCredentials,
                dpop: dpop)
        } catch {
            throw .failed(SignInFailure(error))
        }
        // §2.2 says 201; 200 is taken too, from a server that answers every successful POST so. `expires_in` is not
        // needed: the browser is sent at once.
        guard answer.status == 201 || answer.status == 200 else {
            let retryAfter = RetryAfter.seconds(answer.headers.first(name: "retry-after"))
            throw .rejected(TokenEndpointFailure(status: answer.status, json: answer.body, retryAfter: retryAfter))
        }
        guard let object = JSONObject.dictionary(answer.body), let requestURI = object["request_uri"] as? String,
            !requestURI.isEmpty
        else {
            throw .failed(
                SignInFailure(
                    .misconfigured,
                    "The pushed authorization request endpoint \(DiscoveryError.shown(endpoint.text)) answered "
                        + "\(answer.status) without a request_uri (RFC 9126 §2.2); nothing was signed in."))
        }
        return requestURI
    }

    /// What the person reads when the server refused the push with `failure` (other than a stale registration, which
    /// the sign-in mends by registering again): the server's own error code and description, quoted.
    package static func refused(_ failure: TokenEndpointFailure, endpoint: String) -> SignInFailure {
        let detail = failure.summary.map { " (\(DiscoveryError.shown($0)))" } ?? ""
        let kind: SignInFailure.Kind = failure.status == 429 || failure.status >= 500 ? .unavailable : .misconfigured
        return SignInFailure(
            kind,
            "The authorization server refused the pushed authorization request (RFC 9126) at "
                + "\(DiscoveryError.shown(endpoint)) with HTTP \(failure.status): "
                + "\(DiscoveryError.shown(failure.error))\(detail); nothing was signed in.")
    }

    /// The address the browser is sent to (§4): the authorization endpoint with `client_id` and `request_uri` only —
    /// everything else the server already holds.
    static func authorizationURL(endpoint: String, clientID: String, requestURI: String) -> String {
        endpoint + (endpoint.contains("?") ? "&" : "?")
            + FormEncoding.encode([("client_id", clientID), ("request_uri", requestURI)])
    }
}
