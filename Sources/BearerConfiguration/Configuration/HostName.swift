import BearerHTTP
import BearerJSON

/// Host syntax for routes.json: DNS names, IPv4 and IPv6 literals (RFC 3986 §3.2.2), and which ones are loopback.
///
/// Hosts are handled without brackets here; URLs and `host:port` strings add them around IPv6 literals.
package enum HostName {
    /// The four octets of a dotted-quad IPv4 address, without leading zeros (which some resolvers read as octal).
    package static func ipv4Octets(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var octets: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy(URICharacters.isDigit),
                part.count == 1 || part.first != "0", let value = UInt8(part)
            else { return nil }
            octets.append(value)
        }
        return octets
    }

    /// The eight 16-bit groups of an IPv6 address (RFC 4291 §2.2), or `nil`; zone identifiers are not accepted.
    package static func ipv6Groups(_ text: Substring) -> [UInt16]? {
        guard let gap = text.firstRange(of: "::") else {
            let all = groups(text)
            return all?.count == 8 ? all : nil
        }
        let tailText = text[gap.upperBound...]
        guard !tailText.contains("::"), let head = groups(text[..<gap.lowerBound]), let tail = groups(tailText),
            head.count + tail.count <= 7
        else { return nil }
        return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    }

    /// Groups on one side of `::`; the last may be an embedded IPv4 address (two groups).
    private static func groups(_ text: Substring) -> [UInt16]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var result: [UInt16] = []
        for (position, part) in parts.enumerated() {
            if position == parts.count - 1, part.contains(".") {
                guard let octets = ipv4Octets(part) else { return nil }
                result.append(UInt16(octets[0]) << 8 | UInt16(octets[1]))
                result.append(UInt16(octets[2]) << 8 | UInt16(octets[3]))
            } else {
                guard (1...4).contains(part.utf8.count), part.utf8.allSatisfy(URICharacters.isHexDigit),
                    let value = UInt16(part, radix: 16)
                else { return nil }
                result.append(value)
            }
        }
        return result
    }

    /// A DNS name (RFC 1123 labels, `_` tolerated for internal hosts) that cannot be mistaken for a number.
    static func isValidName(_ text: Substring) -> Bool {
        guard (1...253).contains(text.utf8.count) else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            let bytes = label.utf8
            guard (1...63).contains(bytes.count),
                bytes.allSatisfy({ URICharacters.isAlpha($0) || URICharacters.isDigit($0) || $0 == 0x2D || $0 == 0x5F }
                ),
                label.first != "-", label.last != "-"
            else { return false }
        }
        // "127.1" or "0x7f.1" resolve to IP addresses in some resolvers; a name needs a non-numeric last label.
        let last = labels[labels.count - 1].lowercased().utf8
        let numeric = last.allSatisfy(URICharacters.isDigit)
        let hexadecimal = last.starts(with: "0x".utf8) && last.dropFirst(2).allSatisfy(URICharacters.isHexDigit)
        return !numeric && !hexadecimal
    }

    /// Whether `host` (no brackets) is a DNS name, an IPv4 or an IPv6 literal.
    package static func isValid(_ host: Substring) -> Bool {
        ipv4Octets(host) != nil || ipv6Groups(host) != nil || isValidName(host)
    }

    /// `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback (`::ffff:127.0.0.1`).
    package static func isLoopback(_ host: some StringProtocol) -> Bool {
        let text = Substring(host)
        if text.lowercased() == "localhost" { return true }
        if let octets = ipv4Octets(text) { return octets[0] == 127 }
        if let groups = ipv6Groups(text) {
            if groups == [0, 0, 0, 0, 0, 0, 0, 1] { return true }
            return groups[0..<5].allSatisfy { $0 == 0 } && groups[5] == 0xFFFF && groups[6] >> 8 == 127
        }
        return false
    }

    /// Why an authority is not one that routes.json or `--listen` may name.
    package enum AuthorityProblem: Error, Equatable {
        case missingHost
        case invalidHost
        case invalidPort
    }

    /// `host[:port]` as routes.json and `--listen` write it, taken apart by ``Authority/split(_:)``: the host a DNS
    /// name, an IPv4 address or an IPv6 address in brackets, lowercased and without its brackets; the port 0...65535,
    /// nil when there is none (the caller says whether 0 or no port will do).
    package static func authority(_ text: Substring) throws(AuthorityProblem) -> (host: String, port: Int?) {
        guard let (host, portText) = Authority.split(text) else { throw .invalidHost }
        if host.utf8.first == UInt8(ascii: "[") {
            guard ipv6Groups(Authority.unbracketed(host)) != nil else { throw .invalidHost }
        } else {
            guard !host.isEmpty else { throw .missingHost }
            guard ipv4Octets(host) != nil || isValidName(host) else { throw .invalidHost }
        }
        let name = Authority.unbracketed(host).lowercased()
        guard let portText else { return (name, nil) }
        guard let port = Authority.port(portText) else { throw .invalidPort }
        return (name, port)
    }
}
