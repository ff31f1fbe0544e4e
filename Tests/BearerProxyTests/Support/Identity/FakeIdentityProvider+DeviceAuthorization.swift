import Foundation

extension FakeIdentityProvider {
    /// A device authorization the fake granted (`lastDeviceAuthorization`, `deviceAuthorizations`): what the
    /// `/devicecode` answer carried and where the code stands now.
    struct DeviceAuthorization: Sendable, Equatable {
        /// Where the code stands.
        enum Status: Sendable, Equatable {
            /// Polls answer `authorization_pending`.
            case pending
            /// `approveDeviceCode(userCode:as:)` was called; the next poll gets tokens for this user.
            case approved(User)
            /// The approved code was redeemed; further polls answer `bad_verification_code`.
            case redeemed
            /// `declineDeviceCode(userCode:)` was called: polls answer `authorization_declined`.
            case declined
            /// `expireDeviceCode(userCode:)` was called (polls after `expires_in` get the same answer):
            /// `expired_token`.
            case expired
        }

        /// `user_code` (8 characters of `A-Z` and `2-9`, without `I` and `O`).
        var userCode: String
        /// `device_code`.
        var deviceCode: String
        /// The client that asked.
        var clientID: String
        /// `scope` as requested (the scopes the tokens are issued for).
        var scope: String
        /// `interval` as answered (seconds; grows by 5 for every `slow_down` the interval enforcement sends).
        var interval: Int
        /// When `expires_in` runs out.
        var expiresAt: Date
        /// Where the code stands.
        var status: Status
        /// When the code was last polled (for the interval enforcement).
        var lastPolledAt: Date?
    }
}
