import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A writer that hammers one token cache file, for the tests that kill it mid-write or run two at once; the
/// test-only `bearer-proxy-stress` executable runs it in a process of its own, with the product's own `TokenStore`
/// (this module uses only the library's public interface, and ships in no product).
///
/// Writer `w` appends tokens `w`/0, `w`/1, … one per ``TokenStore/update(_:)``, to an account whose refresh token is
/// 64 KiB, so every write spans many pages and a torn write could not pass as a whole file. Every token's value is
/// a function of its writer and index, so ``census(of:)`` can check a file read back: each writer's tokens must be
/// exactly 0..<n with the right values — a torn write fails to decode, a lost update leaves a gap.
public enum StateStress {
    /// The flow name the stress account carries.
    static let flow = "stress"
    /// Size of the refresh token, which makes every write at least this big.
    static let refreshTokenSize = 64 * 1024

    /// Runs `iterations` updates as writer `writer` (default `pid-<process id>`), calling `progress` with the
    /// number of updates completed after each one. The default `progress` prints that number and a newline to
    /// standard output, unbuffered, so a parent process can tell how far the writer got before it kills it.
    public static func runWriter(
        directory: StateDirectory, accountKey: String, iterations: Int, writer: String? = nil,
        progress: (Int) -> Void = StateStress.reportToStandardOutput
    ) throws(StateError) {
        let store = TokenStore(directory: directory, accountKey: accountKey)
        let writer = writer ?? "pid-\(getpid())"
        guard iterations > 0 else { return }
        for completed in 1...iterations {
            try store.update { account in
                var current = account ?? PersistedAccount(flow: flow, refreshToken: refreshToken, updatedAt: Date())
                let index = current.accessTokens.lazy.filter { Self.writer(of: $0) == writer }.count
                current.accessTokens.append(token(writer: writer, index: index))
                current.updatedAt = Date()
                account = current
            }
            progress(completed)
        }
    }

    /// Writes `"<count>\n"` to file descriptor 1 with one write(2), bypassing stdio buffering.
    public static func reportToStandardOutput(_ count: Int) {
        reportToStandardOutput(line: "\(count)")
    }

    /// Writes `line` and a newline to file descriptor 1 with one write(2), bypassing stdio buffering.
    public static func reportToStandardOutput(line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    /// A stress file that does not hold what the writers wrote.
    public struct Inconsistency: Error, CustomStringConvertible {
        public var description: String
    }

    /// How many tokens each writer has in `account`, after checking that they are exactly what the writers wrote.
    public static func census(of account: PersistedAccount) throws(Inconsistency) -> [String: Int] {
        guard account.flow == flow else { throw Inconsistency(description: "flow is \(account.flow)") }
        guard account.refreshToken == refreshToken else {
            throw Inconsistency(description: "the refresh token is not the one written")
        }
        var counts: [String: Int] = [:]
        for token in account.accessTokens {
            guard let writer = writer(of: token), let index = index(of: token) else {
                throw Inconsistency(description: "unexpected token for \(token.scopes)")
            }
            let expected = counts[writer, default: 0]
            guard index == expected else {
                throw Inconsistency(description: "writer \(writer): token \(index) where \(expected) was expected")
            }
            guard token == self.token(writer: writer, index: index) else {
                throw Inconsistency(description: "writer \(writer): token \(index) does not hold what was written")
            }
            counts[writer] = expected + 1
        }
        return counts
    }

    static let refreshToken = String(repeating: "stress-refresh-token/", count: refreshTokenSize / 21 + 1)

    static func token(writer: String, index: Int) -> PersistedAccessToken {
        let scope = "stress/\(writer)/\(index)"
        let expiry = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01: never expires during a test
        return PersistedAccessToken(
            scopes: [scope], grantedScopes: [scope],
            value: "\(writer).\(index)." + String(repeating: "v", count: 480), expiresOn: expiry, refreshOn: expiry)
    }

    private static func writer(of token: PersistedAccessToken) -> String? {
        let parts = token.scopes.first?.split(separator: "/") ?? []
        guard token.scopes.count == 1, parts.count == 3, parts[0] == "stress" else { return nil }
        return String(parts[1])
    }

    private static func index(of token: PersistedAccessToken) -> Int? {
        token.scopes.first?.split(separator: "/").last.flatMap { Int($0) }
    }
}
