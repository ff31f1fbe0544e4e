import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A client assertion the platform issues — a Kubernetes projected service-account token, a CI job's OpenID
/// Connect ID token — presented as it is (RFC 7521 §4.2, RFC 7523 §2.2; Entra's workload identity federation).
///
/// It is obtained again at every token request: the platform rotates it (the kubelet rewrites the file well before
/// it expires), and token requests are rare — one per scope set and token lifetime — so reading it each time is
/// simpler than watching it and never stale. Its content appears in no message: errors name only where it came
/// from.
struct FederatedAssertion: Sendable {
    /// How long a failure to obtain the assertion blocks the next attempt: the platform usually fixes it soon.
    static let retryAfterSeconds = 5
    /// The largest assertion read (a projected token is about 1 KiB).
    static let sizeLimit = 64 * 1024

    let source: ClientCredentialsAccount.AssertionSource
    /// What the assertion is for, as messages name it: "client assertion", or an on-behalf-of route's "actor token".
    let role: String
    /// `tokenEnv`'s value, taken from the environment at start-up (a process's environment does not change).
    private let fixedValue: String?

    init(
        source: ClientCredentialsAccount.AssertionSource, environment: [String: String],
        role: String = "client assertion"
    ) throws(TokenError) {
        self.source = source
        self.role = role
        if case .tokenEnv(let variable) = source {
            guard let value = environment[variable], !value.isEmpty else {
                throw .misconfigured(reason: "environment variable \(variable) (the \(role)) is not set")
            }
            fixedValue = value
        } else {
            fixedValue = nil
        }
    }

    /// Where the assertion comes from, as messages name it; never its content.
    var origin: String {
        switch source {
        case .file(let file): "the \(role) file \(file)"
        case .fileEnv(let variable, let file): "the \(role) file \(file) (named by \(variable))"
        case .tokenEnv(let variable): "the \(role) in \(variable)"
        case .command(let argv, _): "the output of the \(role) command \(argv.first ?? "")"
        }
    }

    /// The assertion to send now: read from its source, checked to be a compact JWS whose `exp` has not passed.
    /// Anything else is a 503 that names the source, before any request reaches the identity provider.
    package func current(now: Date) async throws(TokenError) -> String {
        let text: String
        switch source {
        case .file(let file), .fileEnv(_, let file): text = try read(file)
        case .tokenEnv: text = fixedValue ?? ""
        case .command(let argv, let timeout): text = try await run(argv, timeout: timeout)
        }
        let assertion = text.trimmingWhitespace()
        guard !assertion.isEmpty else { throw unavailable("is empty") }
        guard let claims = Self.claims(ofCompactJWS: assertion) else {
            throw unavailable("is not a JWT (three base64url parts: header, claims, signature)")
        }
        if let exp = JSONObject.number(claims["exp"]), Date(timeIntervalSince1970: exp) <= now {
            let expiry = Date(timeIntervalSince1970: exp).formatted(.iso8601)
            throw unavailable("expired at \(expiry); the platform has not replaced it")
        }
        return assertion
    }

    /// The claims of a compact JWS (RFC 7515 §7.1): three non-empty base64url parts, the first two JSON objects.
    package static func claims(ofCompactJWS text: String) -> [String: Any]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isBase64URL) }),
            let header = Base64URL.decode(parts[0]), JSONObject.dictionary(header) != nil,
            let payload = Base64URL.decode(parts[1])
        else { return nil }
        return JSONObject.dictionary(payload)
    }

    /// `A–Z a–z 0–9 - _`: the base64url alphabet (RFC 4648 §5), without padding as JOSE writes it.
    private static func isBase64URL(_ byte: UInt8) -> Bool {
        URICharacters.isAlpha(byte) || URICharacters.isDigit(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }

    private func unavailable(_ problem: String) -> TokenError {
        .providerUnavailable(reason: "\(origin) \(problem)", retryAfterSeconds: Self.retryAfterSeconds)
    }

    private func read(_ file: String) throws(TokenError) -> String {
        guard let isDirectory = ConfigurationReader.existingIsDirectory(file) else {
            throw unavailable("does not exist")
        }
        guard !isDirectory, let data = FileManager.default.contents(atPath: file) else {
            throw unavailable("is not readable")
        }
        guard data.count <= Self.sizeLimit else { throw unavailable("is larger than \(Self.sizeLimit) bytes") }
        guard let text = String(data: data, encoding: .utf8) else { throw unavailable("is not UTF-8 text") }
        return text
    }

    /// The program's stdout: the JWT, or JSON whose `value` is the JWT (what GitHub Actions' ID token endpoint
    /// answers, so `curl` can print it unchanged). Its stderr is not quoted: a program may echo what it printed.
    private func run(_ argv: [String], timeout: Duration) async throws(TokenError) -> String {
        func failed(_ problem: String) -> TokenError {
            .providerUnavailable(
                reason: "the \(role) command \(argv.first ?? "") \(problem)",
                retryAfterSeconds: Self.retryAfterSeconds)
        }
        let output: CommandRunner.Output
        do {
            output = try await CommandRunner.run(argv, timeout: timeout)
        } catch {
            switch error {
            case .timedOut: throw failed("did not finish within \(timeout)")
            case .cannotStart(let reason): throw failed("cannot be run: \(reason)")
            }
        }
        guard output.status == 0 else { throw failed("exited with status \(output.status)") }
        let stdout = output.stdout.trimmingWhitespace()
        guard stdout.hasPrefix("{") else { return stdout }
        guard let value = JSONObject.dictionary(Data(stdout.utf8))?["value"] as? String else {
            throw failed("printed JSON without a \"value\" string")
        }
        return value
    }
}
