/// `Authorization: Bearer <token>` (RFC 6750 §2.1) taken apart in one place: the client key check and the `/-/echo`
/// mirror read it the same way. (A file of its own although short: it is the request side of ``BearerChallenge``,
/// and both `Safety/` and `Admin/` use it.)
enum BearerCredentials {
    /// The token of a `Bearer <token>` value (the scheme is case-insensitive, RFC 9110 §11.1); nil for any other.
    static func token(in value: String) -> Substring? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1]
    }
}
