extension FakeFirebase {
    /// What the fake Microsoft authorization endpoint does with a valid request (`setAuthorizeOutcome(_:)`).
    enum AuthorizeOutcome: Sendable, Equatable {
        /// The Microsoft user (`setMicrosoftUser(_:)`) signs in: `302 Location: <redirect_uri>?code=CODE&state=STATE`
        /// with a single-use code.
        case signIn
        /// The sign-in fails: `302 Location: <redirect_uri>?error=ERROR&error_description=DESCRIPTION&state=STATE`.
        case error(String, description: String)
        /// A code is issued, but the redirect carries another `state` (`<state>-tampered`): a stale or forged
        /// callback the client must ignore (signInWithIdp would answer `INVALID_IDP_RESPONSE`).
        case wrongState

    }
}

extension FakeFirebase {
    /// A misbehaviour to inject, queued per endpoint with `enqueue(_:at:times:)` (securetoken:
    /// `enqueueSecureToken(_:times:)`). It replaces the endpoint's answer (after the API key check); nothing is
    /// consumed (codes, sessions, refresh tokens stay as they were). Requests are still recorded.
    enum Failure: Sendable, Equatable {
        /// An error envelope with this message (`"CODE"` or `"CODE : detail"`) and status (400 by default).
        case error(String, status: Int = 400)
        /// `429` with `Retry-After: retryAfter` and `TOO_MANY_ATTEMPTS_TRY_LATER` (status `RESOURCE_EXHAUSTED`).
        case throttle(retryAfter: Int)
        /// `503` `The service is currently unavailable.` (status `UNAVAILABLE`), no `Retry-After`.
        case unavailable
        /// Answer with exactly this (e.g. a 200 whose body is not JSON).
        case raw(status: Int, headers: [String: String] = [:], body: String)

        /// A short label for records (`RecordedFirebaseRequest.injected`).
        var label: String {
            switch self {
            case .error(let message, let status): return "error \(status) \(message)"
            case .throttle(let retryAfter): return "throttle(retryAfter: \(retryAfter))"
            case .unavailable: return "unavailable"
            case .raw(let status, _, _): return "raw(\(status))"
            }
        }

        /// The error envelope this failure answers with, if it is one.
        var envelope: FakeFirebaseError? {
            switch self {
            case .error(let message, let status): return FakeFirebaseError(status: status, message: message)
            case .throttle(let retryAfter):
                return FakeFirebaseError(status: 429, message: "TOO_MANY_ATTEMPTS_TRY_LATER", retryAfter: retryAfter)
            case .unavailable: return FakeFirebaseError(status: 503, message: "The service is currently unavailable.")
            case .raw: return nil
            }
        }
    }
}

extension FakeFirebase {
    /// How `signInWithIdp` reports the Microsoft access token's lifetime in `oauthExpireIn`. The API spec says
    /// int32; the iOS SDK reads a string; the emulator leaves it out.
    enum OAuthExpireIn: Sendable, Equatable {
        /// A JSON number: `"oauthExpireIn":3599`.
        case int(Int)
        /// A JSON string: `"oauthExpireIn":"3599"`.
        case string(Int)

        /// The lifetime the Graph token gets (seconds).
        var seconds: Int {
            switch self {
            case .int(let seconds), .string(let seconds): return seconds
            }
        }

        /// The JSON value to send.
        var jsonValue: any Sendable {
            switch self {
            case .int(let seconds): return seconds
            case .string(let seconds): return String(seconds)
            }
        }
    }
}
