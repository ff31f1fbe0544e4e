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

/// An error answer of Firebase Auth: `{"error":{"code":400,"message":"EMAIL_NOT_FOUND",…}}`, where the message
/// may read `CODE : detail` (docs/firebase.md §4). Branches on the code, never on the detail.
struct FirebaseFailure: Error, Sendable, Equatable {
    package var status: Int
    var code: String
    package var detail: String?
    var retryAfter: Int?

    init(status: Int, json data: Data, retryAfter: Int?) {
        let object = JSONObject.dictionary(data)
        let error = object?["error"] as? [String: Any]
        let message = (error?["message"] as? String) ?? "HTTP_\(status)"
        if let colon = message.firstRange(of: ":") {
            code = message[..<colon.lowerBound].trimmingWhitespace()
            detail = message[colon.upperBound...].trimmingWhitespace()
        } else {
            code = message
            detail = nil
        }
        self.status = status
        self.retryAfter = retryAfter
    }

    /// Whether waiting may help (throttling, an outage).
    var isTransient: Bool {
        status == 429 || status >= 500 || code == "TOO_MANY_ATTEMPTS_TRY_LATER"
    }

    /// What the token engine makes of a refresh failure: sign in again, or wait.
    var tokenError: TokenError {
        if isTransient {
            return .providerUnavailable(reason: "Firebase: \(code)", retryAfterSeconds: retryAfter ?? 5)
        }
        switch code {
        case "USER_DISABLED":
            return .signInRequired(reason: "The Firebase account was disabled by an administrator (USER_DISABLED).")
        case "TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN", "USER_NOT_FOUND":
            return .signInRequired(reason: "The Firebase sign-in is no longer valid (\(code)).")
        case "API_KEY_INVALID", "PERMISSION_DENIED", "INVALID_GRANT_TYPE", "MISSING_REFRESH_TOKEN":
            return .misconfigured(reason: "Firebase refused the request (\(code)); check apiKeyEnv and projectId")
        default:
            return .signInRequired(reason: "Firebase refused the refresh (\(code)).")
        }
    }

    /// What a person reads when a sign-in fails (one line, what to do).
    func signInFailure(email: String?) -> SignInFailure {
        if isTransient {
            return SignInFailure(.unavailable, "Firebase is throttling or unavailable (\(code)); try again later.")
        }
        switch code {
        case "EMAIL_NOT_FOUND", "INVALID_PASSWORD", "INVALID_LOGIN_CREDENTIALS":
            // One message for all three: with email enumeration protection Firebase only ever says the last.
            return SignInFailure(
                .rejected, "Wrong email or password\(email.map { " for \($0)" } ?? ""); run: bearer-proxy login")
        case "USER_DISABLED":
            return SignInFailure(.rejected, "This Firebase account has been disabled by an administrator.")
        case "INVALID_IDP_RESPONSE":
            return SignInFailure(
                .rejected,
                "Firebase did not accept the Microsoft sign-in (expired or reused code); run: bearer-proxy login")
        case "INVALID_CREDENTIAL_OR_PROVIDER_ID", "INVALID_PROVIDER_ID", "OPERATION_NOT_ALLOWED":
            return SignInFailure(
                .misconfigured,
                "Firebase refused the provider (\(code)): enable Microsoft (or Email/Password) under Authentication → "
                    + "Sign-in method in the Firebase console.")
        case "UNAUTHORIZED_DOMAIN", "INVALID_CONTINUE_URI":
            return SignInFailure(
                .misconfigured,
                "Firebase refused the redirect to localhost (\(code)): add localhost under Authentication → Settings → "
                    + "Authorized domains.")
        case "API_KEY_INVALID", "PERMISSION_DENIED":
            return SignInFailure(.misconfigured, "Firebase refused the API key (\(code)); check apiKeyEnv.")
        case "FEDERATED_USER_ID_ALREADY_LINKED", "EMAIL_EXISTS":
            return SignInFailure(
                .rejected, "This Microsoft account already belongs to another Firebase user (\(code)).")
        default:
            return SignInFailure(.rejected, "Firebase refused the sign-in: \(code)\(detail.map { " (\($0))" } ?? "").")
        }
    }
}
