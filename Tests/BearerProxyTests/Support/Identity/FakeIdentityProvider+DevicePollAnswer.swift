extension FakeIdentityProvider {
    /// A scripted answer to the next device-code poll (`enqueueDevicePoll(_:)`), played before the device code's
    /// own state is looked at (an unknown `device_code` is still `bad_verification_code`). Scripted answers do not
    /// change the device code's state.
    enum DevicePollAnswer: Sendable, Equatable {
        /// `400 {"error":"slow_down",...}` (RFC 8628 §3.5; Entra has no AADSTS code for it, `error_codes` is
        /// `[]`).
        case slowDown
        /// `400 {"error":"authorization_pending","error_codes":[70016],...}`, even if the code was approved.
        case authorizationPending
    }
}
