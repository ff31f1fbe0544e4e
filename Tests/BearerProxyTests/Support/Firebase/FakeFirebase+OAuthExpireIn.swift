extension FakeFirebase {
    /// How `signInWithIdp` reports the Microsoft access token's lifetime in `oauthExpireIn`. The API spec says
    /// int32; the iOS SDK reads a string; the emulator leaves it out.
    enum OAuthExpireIn: Sendable, Equatable {
        /// A JSON number: `"oauthExpireIn":3599`.
        case int(Int)
        /// A JSON string: `"oauthExpireIn":"3599"`.
        case string(Int)
        /// Left out (the Graph token still expires after 3599 s).
        case omitted

        /// The lifetime the Graph token gets (seconds).
        var seconds: Int {
            switch self {
            case .int(let seconds), .string(let seconds): return seconds
            case .omitted: return 3599
            }
        }

        /// The JSON value to send, nil when omitted.
        var jsonValue: (any Sendable)? {
            switch self {
            case .int(let seconds): return seconds
            case .string(let seconds): return String(seconds)
            case .omitted: return nil
            }
        }
    }
}
