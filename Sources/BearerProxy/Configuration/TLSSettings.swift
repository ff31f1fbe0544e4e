/// How to trust upstream and identity-provider certificates: the system roots, plus an optional CA file.
public struct TLSSettings: Sendable, Hashable {
    /// A PEM file of extra trusted CA certificates (for internal CAs and test servers); `nil` = system roots only.
    ///
    /// Checked to exist and be readable at load time; a relative path is resolved against the directory of
    /// routes.json, so this is always absolute after `Configuration.load`.
    public var caFile: String?

    public init(caFile: String? = nil) {
        self.caFile = caFile
    }
}
