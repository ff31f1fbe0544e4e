/// Microsoft authority URLs: `https://login.microsoftonline.com/{tenant}` (and the sovereign clouds), or
/// `https://{tenant}.ciamlogin.com/{tenant}` for External ID. Loopback hosts stand in for test identity providers.
enum MicrosoftAuthority {
    /// Login hosts of the public and sovereign clouds.
    static let loginHosts: Set<String> = [
        "login.microsoftonline.com", "login.microsoftonline.us", "login.chinacloudapi.cn",
        "login.partner.microsoftonline.cn",
    ]

    /// The kinds of authority, which decide which flows may use it.
    enum Kind: Sendable, Equatable {
        case workforce
        case externalID
        case loopback
    }

    /// Tenants are `common`, `organizations`, `consumers`, a GUID, or a domain such as `contoso.onmicrosoft.com`.
    static func isTenant(_ text: some StringProtocol) -> Bool {
        let tenant = Substring(text)
        if ["common", "organizations", "consumers"].contains(tenant.lowercased()) { return true }
        if isGUID(tenant) { return true }
        return tenant.contains(".") && HostName.isValidName(tenant)
    }

    /// `8-4-4-4-12` hexadecimal digits.
    static func isGUID(_ text: Substring) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.utf8.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.utf8.allSatisfy(URICharacters.isHexDigit) }
    }

    /// The kind of a parsed https (or loopback http) URL, or `nil` if it is not a Microsoft authority.
    static func kind(of url: URLParts) -> Kind? {
        if url.isLoopback { return .loopback }
        let segments = url.path.split(separator: "/")
        guard segments.count == 1, url.port == nil || url.port == 443 else { return nil }
        if loginHosts.contains(url.host) { return isTenant(segments[0]) ? .workforce : nil }
        let labels = url.host.split(separator: ".")
        if labels.count == 3, url.host.hasSuffix(".ciamlogin.com") { return .externalID }
        return nil
    }
}
