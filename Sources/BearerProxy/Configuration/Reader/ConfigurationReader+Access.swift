extension ConfigurationReader {
    /// `allowedHosts`: exact host names or IP addresses accepted in `Host` (any port), lowercased, IPv6 unbracketed.
    func readAllowedHosts(_ root: ObjectReader) -> [String]? {
        guard let elements = root.stringElements("allowedHosts", allowEmpty: true) else { return nil }
        var hosts: [String] = []
        for (text, path) in elements {
            var host = Substring(text.lowercased())
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            if host.contains("*") {
                problems.report(path, "must be an exact host name (wildcards are not supported)")
            } else if HostName.isValid(host) {
                if !hosts.contains(String(host)) { hosts.append(String(host)) }
            } else if let colon = host.lastIndex(of: ":"), HostName.isValid(host[..<colon]),
                URLParts.port(host[host.index(after: colon)...]) != nil
            {
                problems.report(path, "must be a host name without a port (every port is accepted)")
            } else {
                problems.report(path, "is not a valid host name or IP address")
            }
        }
        return hosts
    }

    /// `allowedOrigins`: browser origins allowed to call the proxy, normalized to `scheme://host[:port]`.
    func readAllowedOrigins(_ root: ObjectReader) -> [String]? {
        guard let elements = root.stringElements("allowedOrigins", allowEmpty: true) else { return nil }
        var origins: [String] = []
        for (text, path) in elements {
            switch Self.origin(text) {
            case .success(let origin): if !origins.contains(origin) { origins.append(origin) }
            case .failure(let problem): problems.report(path, problem.message)
            }
        }
        return origins
    }

    /// Why a string is not an origin; `message` is the problem text.
    struct OriginProblem: Error {
        let message: String
    }

    /// The ASCII serialization of an origin (RFC 6454 §6.2): lowercased, default port omitted, no path.
    static func origin(_ text: String) -> Result<String, OriginProblem> {
        if text == "*" {
            return .failure(OriginProblem(message: "must be an exact origin; \"*\" would let any web page in"))
        }
        if text == "null" {
            return .failure(OriginProblem(message: "\"null\" is not allowed (sandboxed and file: pages all send it)"))
        }
        guard let url = try? URLParts(parsing: text) else {
            return .failure(OriginProblem(message: "must be an origin such as \"http://localhost:3000\""))
        }
        guard let scheme = Upstream.Scheme(rawValue: url.scheme) else {
            return .failure(OriginProblem(message: "must be an http or https origin"))
        }
        guard url.userinfo == nil, url.query == nil, url.fragment == nil, url.path.isEmpty || url.path == "/" else {
            return .failure(OriginProblem(message: "must be only scheme://host[:port], without a path (RFC 6454)"))
        }
        let port = url.port.flatMap { $0 == scheme.defaultPort ? nil : ":\($0)" } ?? ""
        return .success("\(scheme.rawValue)://\(HostName.bracketed(url.host))\(port)")
    }
}
