import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns a host name into the addresses it resolves to, for the SSRF rule: a name is judged by every address it has,
/// since the connection may use any of them.
package protocol HostResolver: Sendable {
    func addresses(of host: String) async throws(DiscoveryError) -> [IPAddress]
}

/// The system resolver (`getaddrinfo`, which reads /etc/hosts too), run on NIO's thread pool so that a slow DNS
/// server blocks no event loop and no cooperative thread.
package struct SystemHostResolver: HostResolver {
    package func addresses(of host: String) async throws(DiscoveryError) -> [IPAddress] {
        let found: [IPAddress]?
        do {
            found = try await NIOThreadPool.singleton.runIfActive { Self.lookUp(host) }
        } catch {
            throw .hostNotFound(host: host)
        }
        guard let found, !found.isEmpty else { throw .hostNotFound(host: host) }
        return found
    }

    private static func lookUp(_ host: String) -> [IPAddress]? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return nil }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry?.pointee {
            defer { entry = current.ai_next }
            guard let socketAddress = current.ai_addr else { continue }
            switch current.ai_family {
            case AF_INET:
                let address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                addresses.append(.v4(withUnsafeBytes(of: address.sin_addr) { Array($0) }))
            case AF_INET6:
                let address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
                addresses.append(
                    .v6(
                        (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) },
                        zone: zone(address.sin6_scope_id)))
            default:
                continue
            }
        }
        return addresses
    }

    /// The zone of a scope id (RFC 4007 §11.2): its interface's name, which `getaddrinfo` reads back when the
    /// connection is made; its number when the interface has none; nil for none (0).
    static func zone(_ scopeID: UInt32) -> String? {
        guard scopeID != 0 else { return nil }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(scopeID, &name) != nil else { return String(scopeID) }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package init() {}
}
