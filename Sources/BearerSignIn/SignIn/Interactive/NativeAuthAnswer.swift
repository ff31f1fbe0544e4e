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

/// A successful answer of native authentication's `initiate` or `challenge` endpoint (protocols.md §1.1).
enum NativeAuthAnswer: Sendable, Equatable {
    /// Go on with this continuation token (`initiate`).
    case proceed(continuationToken: String)
    /// The server asks for the password.
    case password(continuationToken: String)
    /// The server sent a one-time passcode; `target` is where (a masked email address).
    case oneTimePasscode(continuationToken: String, target: String?, length: Int?)
    /// The server wants the browser (HTTP 200 `challenge_type: redirect`).
    case redirect(reason: String?)

    /// Decodes a 200 answer; nil when it is none of the documented shapes.
    init?(json data: Data) {
        guard let object = JSONObject.dictionary(data) else { return nil }
        let token = object["continuation_token"] as? String
        switch object["challenge_type"] as? String {
        case "redirect":
            self = .redirect(reason: object["redirect_reason"] as? String)
        case "password":
            guard let token else { return nil }
            self = .password(continuationToken: token)
        case "oob":
            guard let token else { return nil }
            self = .oneTimePasscode(
                continuationToken: token, target: object["challenge_target_label"] as? String,
                length: JSONObject.integer(object["code_length"]))
        case nil:
            guard let token else { return nil }
            self = .proceed(continuationToken: token)
        default:
            return nil
        }
    }
}
