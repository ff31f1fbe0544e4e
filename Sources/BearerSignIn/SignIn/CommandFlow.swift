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

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `command`: reuse a CLI that already has a session — `az account get-access-token --resource {resource}`,
/// `gcloud auth print-access-token`, `gh auth token`. The program's stdout is the token, or JSON with
/// `accessToken`/`access_token` and an expiry (`expires_on` epoch seconds, `expiresOn` date text, or `expires_in`).
package struct CommandFlow: SignInFlow {
    package let name = "command"
    package let account: CommandAccount
    package let now: @Sendable () -> Date
    /// A token whose lifetime the program does not say is used for this long (then asked for again).
    static let assumedLifetime: TimeInterval = 10 * 60

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let arguments = account.argv.map { argument in
            argument.replacing("{scopes}", with: request.scopes.description)
                .replacing("{resource}", with: request.scopes.resource ?? ScopeSet.defaultResource)
        }
        let program = arguments.first ?? ""
        let output: CommandRunner.Output
        do {
            output = try await CommandRunner.run(arguments, timeout: account.timeout)
        } catch {
            switch error {
            case .timedOut:
                throw .providerUnavailable(
                    reason:
                        "\(program) did not finish within \(account.timeout)",
                    retryAfterSeconds: 5)
            case .cannotStart(let reason):
                throw .misconfigured(reason: "cannot run \(program): \(reason)")
            }
        }
        guard output.status == 0 else {
            // The program's own words say what to do ("Please run 'az login'"); its first line is enough.
            let said = output.stderr.split(whereSeparator: \.isNewline).first.map { String($0.prefix(300)) }
            throw .signInRequired(
                reason: "\(program) exited with status \(output.status)" + (said.map { ": \($0)" } ?? ""))
        }
        let issued = now()
        guard let parsed = Self.parse(output.stdout, now: issued) else {
            throw .misconfigured(reason: "\(program) printed no token on stdout")
        }
        return AccessToken(value: parsed.token, scopes: request.scopes, expiresOn: parsed.expiresOn, issuedAt: issued)
    }

    /// The token and its expiry from the program's stdout.
    package static func parse(_ stdout: String, now: Date) -> (token: String, expiresOn: Date)? {
        let text = stdout.trimmingWhitespace()
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("{") {
            guard let object = JSONObject.dictionary(Data(text.utf8)),
                let token = (object["accessToken"] as? String) ?? (object["access_token"] as? String), !token.isEmpty
            else { return nil }
            return (token, expiry(in: object, now: now) ?? JWTExpiry.expiry(of: token) ?? now + assumedLifetime)
        }
        guard !text.contains(where: \.isWhitespace) else { return nil }
        return (text, JWTExpiry.expiry(of: text) ?? now + assumedLifetime)
    }

    private static func expiry(in object: [String: Any], now: Date) -> Date? {
        // An epoch: clamped at the end of year 9999 rather than at a duration's ten years.
        if let epoch = TokenResponse.seconds(object["expires_on"], atMost: 253_402_300_799) {
            return Date(timeIntervalSince1970: epoch)
        }
        if let lifetime = TokenResponse.seconds(object["expires_in"] ?? object["expiresIn"]) { return now + lifetime }
        if let text = object["expiresOn"] as? String {
            // `az` prints local time as "2026-11-22 07:00:00.000000"; ISO 8601 is accepted too.
            return (try? Date.ISO8601FormatStyle().parse(text)) ?? localTime(text)
        }
        return nil
    }

    /// `az`'s "2026-11-22 07:00:00.000000" (the fraction optional), in the machine's time zone as the C library
    /// knows it (`TZ`, else /etc/localtime) — the zone `az` printed it in.
    static func localTime(_ text: String) -> Date? {
        let halves = text.split(separator: " ", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let clock = halves[1].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let day = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        let time = clock[0].split(separator: ":", omittingEmptySubsequences: false)
        let isDigits: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
        let fields = day + time
        // Int(_:) is nil for digits past Int.max: six values, or none.
        let values = fields.compactMap { isDigits($0) ? Int($0) : nil }
        guard fields.count == 6, values.count == 6, (1...12).contains(values[1]), (1...31).contains(values[2]),
            (0...23).contains(values[3]), (0...59).contains(values[4]), (0...60).contains(values[5])
        else { return nil }
        var fraction = 0.0
        if clock.count == 2 {
            guard isDigits(clock[1]), let value = Double("0." + clock[1]) else { return nil }
            fraction = value
        }
        var parts = tm()
        parts.tm_year = Int32(clamping: values[0] - 1900)
        parts.tm_mon = Int32(clamping: values[1] - 1)
        parts.tm_mday = Int32(clamping: values[2])
        parts.tm_hour = Int32(clamping: values[3])
        parts.tm_min = Int32(clamping: values[4])
        parts.tm_sec = Int32(clamping: values[5])
        parts.tm_isdst = -1  // let the C library say whether summer time applied then
        let seconds = mktime(&parts)
        guard seconds != -1 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    package init(account: CommandAccount, now: @escaping @Sendable () -> Date) {
        self.account = account
        self.now = now
    }
}
