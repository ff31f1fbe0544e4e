import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Who is signed in — never a secret, so it may be printed by `status` and logged.
///
/// Filled from the id token's `name`, `preferred_username`, `oid` and `tid` claims, or by the flow itself when it
/// has no id token (the dev issuer, a refresh token bootstrapped from elsewhere).
public struct AccountIdentity: Codable, Sendable, Equatable {
    /// The display name (`name` claim).
    public var name: String?
    /// The sign-in name, usually an email address (`preferred_username` claim).
    public var username: String?
    /// The user's object id in the tenant (`oid` claim).
    public var objectID: String?
    /// The tenant the user signed in to (`tid` claim).
    public var tenantID: String?
    /// The Firebase user id (`localId`), for the `firebase` flow.
    public var firebaseUID: String?

    public init(
        name: String? = nil, username: String? = nil, objectID: String? = nil, tenantID: String? = nil,
        firebaseUID: String? = nil
    ) {
        self.name = name
        self.username = username
        self.objectID = objectID
        self.tenantID = tenantID
        self.firebaseUID = firebaseUID
    }

    // These are the keys of the token cache file (format version 1): renaming a property must not rename its key.
    package enum CodingKeys: String, CodingKey {
        case name, username, objectID, tenantID, firebaseUID
    }
}
