import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The shared secret a client presents when the proxy requires one (`BEARER_PROXY_KEY`).
///
/// Compared in constant time, so response timing says nothing about how much of a guess was right; the
/// description never shows the value.
public struct ClientKey: Sendable, CustomStringConvertible {
    private let digest: [UInt8]

    init(_ value: String) {
        digest = Array(SHA256.hash(data: Data(value.utf8)))
    }

    /// Whether `candidate` is the key. Both sides are hashed first so the comparison always runs over 32 bytes,
    /// whatever the candidate's length, and the loop never exits early.
    func matches(_ candidate: String) -> Bool {
        let other = Array(SHA256.hash(data: Data(candidate.utf8)))
        var difference: UInt8 = 0
        for index in 0..<digest.count { difference |= digest[index] ^ other[index] }
        return difference == 0
    }

    public var description: String { "ClientKey(<redacted>)" }
}
