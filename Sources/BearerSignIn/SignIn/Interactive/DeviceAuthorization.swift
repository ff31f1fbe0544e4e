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

/// A device authorization response (RFC 8628 §3.2; Entra's adds `message` — protocols.md §3).
struct DeviceAuthorization: Sendable, Equatable {
    package var deviceCode: String
    var userCode: String
    var verificationURI: String
    /// The provider's own instructions (localized by Entra); shown as-is when present.
    package var message: String?
    var expiresIn: Int
    /// Seconds between polls; RFC 8628 §3.2 says 5 when absent.
    package var interval: Int

    /// Decodes the JSON; nil when a required member is missing. Google spells the URI `verification_url`.
    init?(json data: Data) {
        guard let object = JSONObject.dictionary(data),
            let deviceCode = object["device_code"] as? String, let userCode = object["user_code"] as? String,
            let uri = (object["verification_uri"] as? String) ?? (object["verification_url"] as? String)
        else { return nil }
        self.deviceCode = deviceCode
        self.userCode = userCode
        verificationURI = uri
        message = object["message"] as? String
        // MSAL Python's defaults when absent: 1800 s to finish, polls every 5 s.
        // Clamped before any conversion: the code lives between a minute and a day, and polling waits 1–60 s whatever
        // the provider says (RFC 8628 §3.2's default is 5; `slow_down` still adds 5 each time).
        expiresIn = Int(
            seconds: TokenResponse.seconds(object["expires_in"]) ?? 1800, rounded: .towardZero, clampedTo: 60...86_400)
        interval = Int(seconds: TokenResponse.seconds(object["interval"]) ?? 5, rounded: .towardZero, clampedTo: 1...60)
    }

    /// What the person has to do, in one line.
    var instructions: String {
        message ?? "To sign in, use a web browser to open the page \(verificationURI) and enter the code \(userCode)."
    }
}
