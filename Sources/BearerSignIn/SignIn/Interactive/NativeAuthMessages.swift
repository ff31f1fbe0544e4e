import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// What to tell a person when native authentication fails: one line per documented error, saying what to do
/// (protocols.md §1.2). Branches on `error`, `suberror` and the AADSTS codes, never on the description.
struct NativeAuthMessages: Sendable {
    package let username: String
    package let clientId: String

    package func failure(_ failure: TokenEndpointFailure) -> SignInFailure {
        if failure.status == 429 || failure.status >= 500 || failure.error == "temporarily_unavailable" {
            return SignInFailure(failure.tokenError)
        }
        switch (failure.error, failure.suberror) {
        case ("user_not_found", _):
            return SignInFailure(
                .rejected,
                "No account \(username) in this tenant: check \"username\" in routes.json (or sign up first).")
        case ("invalid_client", "nativeauthapi_disabled"):
            return SignInFailure(
                .misconfigured,
                "Native authentication is not enabled for the app \(clientId): in the Microsoft Entra admin center, "
                    + "App registrations → the app → Authentication → Settings, set \"Allow native authentication\" "
                    + "to Yes.")
        case ("unauthorized_client", _), ("invalid_client", _):
            return SignInFailure(
                .misconfigured,
                "The tenant does not know the app \(clientId) as a public client: check \"clientId\" and "
                    + "\"authority\" in routes.json (\(failure.reason)).")
        case ("unsupported_challenge_type", _):
            return SignInFailure(
                .misconfigured,
                "The tenant supports none of the sign-in methods bearer-proxy offers (\(failure.reason)); enable "
                    + "email with password or email one-time passcode for the user flow, or use \"flow\": \"browser\".")
        case ("expired_token", _):
            return SignInFailure(
                .rejected, "The sign-in took too long and expired on the server; run: bearer-proxy login")
        case ("invalid_grant", "mfa_required"):
            return SignInFailure(
                .rejected,
                "\(username) must complete multi-factor authentication, which the native flow does not do here; use "
                    + "\"flow\": \"browser\" (or \"device-code\") in routes.json.")
        case ("invalid_grant", "registration_required"):
            return SignInFailure(
                .rejected,
                "\(username) must first register a strong authentication method; sign in once in a browser, or use "
                    + "\"flow\": \"browser\" in routes.json.")
        case ("invalid_grant", "invalid_oob_value"):
            return SignInFailure(.rejected, "The one-time passcode is wrong; run: bearer-proxy login to get a new one.")
        case ("invalid_grant", _) where failure.codes.contains(50126) || failure.codes.contains(50034):
            return SignInFailure(
                .rejected, "Wrong password for \(username) (or no such user); check it and run: bearer-proxy login")
        case ("invalid_grant", _) where failure.codes.contains(50053):
            return SignInFailure(.rejected, "\(username) is locked out after too many attempts; try again later.")
        case ("invalid_request", _) where failure.codes.contains(50142):
            return SignInFailure(
                .rejected,
                "The password of \(username) must be reset first (self-service password reset in a browser); then "
                    + "run: bearer-proxy login")
        case ("access_denied", _):
            return SignInFailure(
                .rejected, "The tenant blocked this sign-in method for \(username) (\(failure.reason)).")
        case ("invalid_grant", _):
            return SignInFailure(
                .rejected, "Sign-in refused: \(failure.reason); run: bearer-proxy login to start again.")
        default:
            return SignInFailure(.misconfigured, "Native authentication refused the request: \(failure.reason).")
        }
    }

    /// The server answered `challenge_type: redirect`: this account cannot sign in through the API.
    func redirect(reason: String?) -> SignInFailure {
        let why = reason.map { " (\($0))" } ?? ""
        return SignInFailure(
            .misconfigured,
            "\(username) cannot sign in with native authentication\(why): this account needs the browser. Set "
                + "\"flow\": \"browser\" in routes.json (keep \"authority\" and \"clientId\"), then run: "
                + "bearer-proxy login")
    }
}
