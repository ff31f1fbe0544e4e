import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Who is at the other end of a Unix-domain socket connection: the kernel records the peer's credentials when it
/// connects, and `SO_PEERCRED` reads them (unix(7)) — no lookup, no race with the peer's exit.
enum PeerCredentials {
    /// Why the peer's uid is not known.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// Linux's `struct ucred` (socket(7)), which Glibc's module map leaves out (it needs `_GNU_SOURCE`): three
    /// 32-bit fields, laid out in order as C lays them out.
    private struct KernelCredentials: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// The uid of `channel`'s peer; a failed future never happens: failures are values.
    static func uid(of channel: any Channel) -> EventLoopFuture<Result<UInt32, Failure>> {
        #if os(Linux)
            guard let provider = channel as? any SocketOptionProvider else {
                return channel.eventLoop.makeSucceededFuture(.failure(Failure(description: "not a socket")))
            }
            let credentials: EventLoopFuture<KernelCredentials> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            return credentials.map { .success(UInt32($0.uid)) }.recover {
                .failure(Failure(description: "SO_PEERCRED failed: \($0)"))
            }
        #else
            return channel.eventLoop.makeSucceededFuture(
                .failure(Failure(description: "this platform does not say who is at the other end of a socket")))
        #endif
    }
}
