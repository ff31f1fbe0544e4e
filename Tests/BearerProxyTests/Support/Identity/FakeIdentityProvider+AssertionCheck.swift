extension FakeIdentityProvider {
    /// The client assertion check that failed (`RecordedTokenRequest.assertionFailure`), in the order the fake
    /// checks them, with the Entra error each one answers (all `invalid_client`, HTTP 401).
    enum AssertionCheck: String, Sendable, Equatable, CaseIterable {
        /// `client_assertion_type` is not `urn:ietf:params:oauth:client-assertion-type:jwt-bearer` (50027).
        case assertionType
        /// Not a compact JWS with a JSON header and payload (50027).
        case malformed
        /// `alg` is neither PS256 nor RS256 (5002738).
        case algorithm
        /// The thumbprint header for the `alg` (PS256: `x5t#S256`, RS256: `x5t`) is missing or names no
        /// certificate registered on the client (700027).
        case thumbprint
        /// The signature does not verify with the registered key (700027).
        case signature
        /// `iss` is not the client id (700021).
        case issuer
        /// `sub` is not the client id (700021).
        case subject
        /// `aud` is not the token endpoint's URL (50012).
        case audience
        /// No `jti` (50027).
        case missingJTI
        /// `nbf` or `iat` lies beyond now + clock skew (500133).
        case notYetValid
        /// `exp` is missing or not in the future (500133).
        case expired
        /// `exp` lies further ahead than the maximum assertion lifetime (500133).
        case lifetimeTooLong
        /// The `jti` was already used by an accepted assertion (50027).
        case replayedJTI

        /// The answer for this failure.
        var entraError: FakeIdentityError {
            switch self {
            case .assertionType:
                return .invalidClient(50027, "Invalid JWT token: client_assertion_type must be jwt-bearer.")
            case .malformed: return .invalidClient(50027, "Invalid JWT token: the assertion is not a JWS.")
            case .algorithm: return .invalidClient(5002738)
            case .thumbprint:
                return .invalidClient(
                    700027,
                    "The certificate with the identifier used to sign the client assertion is not registered on the application."
                )
            case .signature: return .invalidClient(700027)
            case .issuer, .subject: return .invalidClient(700021)
            case .audience: return .invalidClient(50012)
            case .missingJTI: return .invalidClient(50027, "Invalid JWT token: no 'jti' claim.")
            case .notYetValid:
                return .invalidClient(500133, "Assertion is not within its valid time range (not yet valid).")
            case .expired: return .invalidClient(500133, "Assertion is not within its valid time range (expired).")
            case .lifetimeTooLong:
                return .invalidClient(500133, "Assertion is not within its valid time range (lifetime too long).")
            case .replayedJTI: return .invalidClient(50027, "Invalid JWT token: the 'jti' was already used.")
            }
        }
    }
}
