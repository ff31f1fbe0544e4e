import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(Glibc)
    import Glibc

    /// Asks the kernel which user owns the peer's socket of a loopback TCP connection, with one request on a
    /// `NETLINK_SOCK_DIAG` socket (sock_diag(7), `inet_diag`): an exact lookup by the connection's four-tuple, the
    /// way `ss -tne` finds a socket's `uid`. Any user may ask; no capability is needed.
    ///
    /// The request and reply are laid out by hand (the structures are fixed kernel ABI: `nlmsghdr`,
    /// `inet_diag_req_v2`, `inet_diag_msg` in `<linux/inet_diag.h>`), since Swift does not import them.
    enum SocketDiagnostics {
        /// Why no answer came.
        package enum Failure: Error, Equatable {
            /// The kernel has no such interface here (not Linux, or netlink sock_diag unavailable): use /proc.
            case unsupported(errno: Int32)
            /// The kernel holds no such socket: the peer is on another machine (or has just closed).
            case notLocal
            /// The lookup itself failed (no descriptor left, a garbled reply).
            case failed(String)
        }

        private static let netlinkSockDiag: Int32 = 4  // NETLINK_SOCK_DIAG, <linux/netlink.h>
        private static let sockDiagByFamily: UInt16 = 20  // SOCK_DIAG_BY_FAMILY
        private static let netlinkError: UInt16 = 2  // NLMSG_ERROR
        private static let requestFlag: UInt16 = 1  // NLM_F_REQUEST
        private static let headerSize = 16  // sizeof(struct nlmsghdr)
        private static let requestSize = 56  // sizeof(struct inet_diag_req_v2)
        /// Offset of `idiag_uid` in `inet_diag_msg`: family, state, timer, retrans (4), the socket id (48),
        /// expires, rqueue, wqueue (12).
        private static let uidOffset = 64

        /// The uid owning the socket whose local end is `ends`' peer and remote end is the proxy.
        static func owner(of ends: SocketEnds) -> Result<UInt32, Failure> {
            let fd = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), netlinkSockDiag)
            guard fd >= 0 else {
                let error = errno
                if error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM {
                    return .failure(.failed("cannot open a netlink socket: \(String(cString: strerror(error)))"))
                }
                return .failure(.unsupported(errno: error))
            }
            defer { close(fd) }
            // A reply comes at once or not at all; never hold the event loop for long.
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let request = Self.request(for: ends)
            // struct sockaddr_nl for the kernel (pid 0): nl_family, nl_pad, nl_pid, nl_groups.
            var kernel = sockaddr_storage()
            let kernelSize = 12
            withUnsafeMutableBytes(of: &kernel) { bytes in
                bytes.copyBytes(from: native(UInt16(AF_NETLINK)) + [UInt8](repeating: 0, count: kernelSize - 2))
            }
            let sent = request.withUnsafeBytes { bytes in
                withUnsafePointer(to: &kernel) { address in
                    address.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(kernelSize))
                    }
                }
            }
            guard sent == request.count else {
                return .failure(.failed("cannot send the lookup: \(String(cString: strerror(errno)))"))
            }
            var reply = [UInt8](repeating: 0, count: 8192)
            let received = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard received >= 0 else {
                return .failure(.failed("no answer to the lookup: \(String(cString: strerror(errno)))"))
            }
            return Self.owner(inReply: reply[..<received])
        }

        /// `nlmsghdr` + `inet_diag_req_v2` asking for the one TCP socket whose local end is the peer.
        package static func request(for ends: SocketEnds) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(headerSize + requestSize)
            bytes += native(UInt32(headerSize + requestSize))  // nlmsg_len
            bytes += native(sockDiagByFamily)  // nlmsg_type
            bytes += native(requestFlag)  // nlmsg_flags
            bytes += native(UInt32(1))  // nlmsg_seq
            bytes += native(UInt32(0))  // nlmsg_pid
            bytes.append(UInt8(ends.family == .inet ? AF_INET : AF_INET6))  // sdiag_family
            bytes.append(UInt8(IPPROTO_TCP))  // sdiag_protocol
            bytes += [0, 0]  // idiag_ext, pad
            bytes += native(UInt32.max)  // idiag_states: any
            // inet_diag_sockid: the peer's socket has the peer as its source and the proxy as its destination.
            bytes += bigEndian(ends.peerPort)
            bytes += bigEndian(ends.localPort)
            bytes += padded(ends.peerAddress)
            bytes += padded(ends.localAddress)
            bytes += native(UInt32(0))  // idiag_if
            bytes += native(UInt32.max) + native(UInt32.max)  // idiag_cookie: INET_DIAG_NOCOOKIE
            return bytes
        }

        /// The uid in a reply, or why there is none.
        static func owner(inReply reply: ArraySlice<UInt8>) -> Result<UInt32, Failure> {
            let reply = Array(reply)
            guard reply.count >= headerSize else { return .failure(.failed("a truncated reply")) }
            let type = UInt16(reply[4]) | UInt16(reply[5]) << 8
            if type == netlinkError {
                // struct nlmsgerr: a negative errno first.
                guard reply.count >= headerSize + 4 else { return .failure(.failed("a truncated error reply")) }
                let code = -Int32(bitPattern: readNative(reply, at: headerSize))
                if code == ENOENT { return .failure(.notLocal) }
                return .failure(.failed("the socket lookup failed: \(String(cString: strerror(code)))"))
            }
            guard type == sockDiagByFamily, reply.count >= headerSize + uidOffset + 4 else {
                return .failure(.failed("an unexpected reply (type \(type))"))
            }
            return .success(readNative(reply, at: headerSize + uidOffset))
        }

        private static func native<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            // Netlink speaks the host's byte order.
            withUnsafeBytes(of: value) { Array($0) }
        }

        private static func bigEndian(_ value: UInt16) -> [UInt8] {
            [UInt8(value >> 8), UInt8(value & 0xFF)]
        }

        private static func padded(_ address: [UInt8]) -> [UInt8] {
            address + [UInt8](repeating: 0, count: max(0, 16 - address.count))
        }

        private static func readNative(_ bytes: [UInt8], at offset: Int) -> UInt32 {
            var value: UInt32 = 0
            withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes[offset..<offset + 4]) }
            return value
        }
    }
#endif
