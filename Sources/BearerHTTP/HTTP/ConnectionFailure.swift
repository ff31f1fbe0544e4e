import BearerJSON
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a connection to another server — an upstream, an identity provider — failed, in words a person can act on.
///
/// Problem bodies, `status` and logs say this, never a library's own description of the error: BoringSSL's carries
/// the library's build path and its error stack (`…/checkouts/swift-nio-ssl/…/handshake.cc:320`), and NIO's name
/// their internal functions. The set is closed; what no case fits is said in general words.
package enum ConnectionFailure: Equatable, Sendable {
    /// Nothing listens there (`ECONNREFUSED`).
    case refused
    /// No route to the host or its network (`EHOSTUNREACH`, `ENETUNREACH`).
    case unreachable
    /// The host name does not resolve.
    case unresolved
    /// The connection was not established in time (the connect timeout, `ETIMEDOUT`).
    case timedOut
    /// The peer reset or closed the connection.
    case reset
    /// The certificate chain does not end at a trusted root, or a certificate has expired: BoringSSL reports
    /// both as `CERTIFICATE_VERIFY_FAILED`.
    case certificateNotTrusted
    /// The certificate is trusted but does not name the host that was dialled (RFC 9110 §4.3.4, RFC 6125).
    case certificateNameMismatch
    /// The peer did not answer in TLS at all (BoringSSL's `WRONG_VERSION_NUMBER`: typically a plain-HTTP port).
    case notTLS
    /// The peer ended the handshake with an alert (RFC 8446 §6.2), named in lowercase words ("handshake failure").
    case handshakeRefused(alert: String)
    /// Any other TLS failure; `reason` is BoringSSL's reason code only (`NO_SHARED_CIPHER`), never its stack.
    case handshakeFailed(reason: String?)
    /// Any other system error, as `strerror(3)` words it.
    case system(String)
    /// The peer's response is not valid HTTP/1.1.
    case invalidResponse(String)
    /// Anything else.
    case other

    package init(_ error: any Error) {
        switch error {
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                self = .unresolved
            } else if let first = error.connectionErrors.first {
                self.init(first.error)
            } else {
                self = .other
            }
        case let error as IOError: self.init(errno: error.errnoCode)
        case let error as ChannelError:
            switch error {
            case .connectTimeout: self = .timedOut
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed: self = .reset
            default: self = .other
            }
        case is SocketAddressError: self = .unresolved
        case let error as NIOSSLExtraError:
            self = error == .failedToValidateHostname ? .certificateNameMismatch : .handshakeFailed(reason: nil)
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let failure): self.init(boringSSL: failure)
            case .uncleanShutdown: self = .reset
            case .noCertificateToValidate, .unableToValidateCertificate, .cannotMatchULabel:
                self = .certificateNotTrusted
            default: self = .handshakeFailed(reason: nil)
            }
        case let error as HTTPParserError: self = .invalidResponse("\(error)")
        default: self = .other
        }
    }

    private init(errno code: Int32) {
        switch code {
        case ECONNREFUSED: self = .refused
        case EHOSTUNREACH, ENETUNREACH: self = .unreachable
        case ETIMEDOUT: self = .timedOut
        case ECONNRESET, EPIPE, ECONNABORTED: self = .reset
        default: self = .system(String(cString: strerror(code)))
        }
    }

    private init(boringSSL failure: BoringSSLError) {
        guard case .sslError(let stack) = failure,
            let reason = stack.lazy.compactMap({ Self.reasonCode(in: "\($0)") }).first
        else {
            self = .handshakeFailed(reason: nil)
            return
        }
        switch reason {
        case "CERTIFICATE_VERIFY_FAILED": self = .certificateNotTrusted
        case "WRONG_VERSION_NUMBER", "HTTP_REQUEST", "HTTPS_PROXY_REQUEST": self = .notTLS
        default:
            if let prefix = ["TLSV1_ALERT_", "SSLV3_ALERT_"].first(where: reason.hasPrefix) {
                self = .handshakeRefused(alert: reason.dropFirst(prefix.count).replacing("_", with: " ").lowercased())
            } else {
                self = .handshakeFailed(reason: reason)
            }
        }
    }

    /// BoringSSL's reason code in one entry of its error stack, e.g. `CERTIFICATE_VERIFY_FAILED` in
    /// `Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at /…/handshake.cc:320`
    /// (`ERR_error_string_n`'s format: `error:code:library:function:reason`). Only upper-case letters, digits and
    /// `_` pass, so nothing else of the entry can reach a message.
    static func reasonCode(in entry: String) -> String? {
        guard let start = entry.firstRange(of: "error:")?.upperBound else { return nil }
        var packed = entry[start...]
        if let end = packed.firstRange(of: " at ")?.lowerBound { packed = packed[..<end] }
        guard let reason = packed.split(separator: ":").last, !reason.isEmpty, reason.count <= 64,
            reason.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") })
        else { return nil }
        return String(reason)
    }

    /// Whether the TLS layer failed: the peer's certificate or the handshake, not the connection under it.
    package var isTLS: Bool {
        switch self {
        case .certificateNotTrusted, .certificateNameMismatch, .notTLS, .handshakeRefused, .handshakeFailed: true
        default: false
        }
    }

    /// What happened and, where the user can do something about it, what to do: a clause that follows "could not
    /// connect to HOST:" or "cannot reach HOST:".
    package var explanation: String {
        switch self {
        case .refused: "the connection was refused (nothing listens on that port)"
        case .unreachable: "no route to the host"
        case .unresolved: "the host name does not resolve"
        case .timedOut: "the connection was not established in time"
        case .reset: "the connection was closed or reset"
        case .certificateNotTrusted:
            "its TLS certificate is not trusted (not signed by a CA in the system's trust store or in tls.caFile, "
                + "or expired); if it uses a private CA, name that CA's certificate in routes.json: "
                + #""tls": {"caFile": "ca.pem"} on the route, or at the top level for every route and the identity "#
                + "provider"
        case .certificateNameMismatch:
            "its TLS certificate does not name the host in the URL; use a host name the certificate lists"
        case .notTLS: "it did not answer in TLS (is it a plain http server on that port? then use http://)"
        case .handshakeRefused(let alert): "it refused the TLS handshake (alert: \(alert))"
        case .handshakeFailed(let reason):
            "the TLS handshake failed" + (reason.map { " (\($0))" } ?? "")
        case .system(let words): words.lowercased()
        case .invalidResponse(let parser): "its response is not valid HTTP/1.1 (\(parser))"
        case .other: "the connection failed"
        }
    }
}
