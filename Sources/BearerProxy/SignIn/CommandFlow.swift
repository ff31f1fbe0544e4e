import Foundation

/// `command`: reuse a CLI that already has a session — `az account get-access-token --resource {resource}`,
/// `gcloud auth print-access-token`, `gh auth token`. The program's stdout is the token, or JSON with
/// `accessToken`/`access_token` and an expiry (`expires_on` epoch seconds, `expiresOn` date text, or `expires_in`).
struct CommandFlow: SignInFlow {
    let name = "command"
    let account: CommandAccount
    let now: @Sendable () -> Date
    /// A token whose lifetime the program does not say is used for this long (then asked for again).
    static let assumedLifetime: TimeInterval = 10 * 60

    func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let arguments = account.argv.map { argument in
            argument.replacingOccurrences(of: "{scopes}", with: request.scopes.description)
                .replacingOccurrences(of: "{resource}", with: request.scopes.resource ?? ScopeSet.defaultResource)
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
                        "\(program) did not finish within \(account.timeout.formatted(.units(allowed: [.seconds, .milliseconds])))",
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
    static func parse(_ stdout: String, now: Date) -> (token: String, expiresOn: Date)? {
        let text = stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                let token = (object["accessToken"] as? String) ?? (object["access_token"] as? String), !token.isEmpty
            else { return nil }
            return (token, expiry(in: object, now: now) ?? JWTExpiry.expiry(of: token) ?? now + assumedLifetime)
        }
        guard !text.contains(where: \.isWhitespace) else { return nil }
        return (text, JWTExpiry.expiry(of: text) ?? now + assumedLifetime)
    }

    private static func expiry(in object: [String: Any], now: Date) -> Date? {
        if let epoch = TokenResponse.seconds(object["expires_on"]) { return Date(timeIntervalSince1970: epoch) }
        if let lifetime = TokenResponse.seconds(object["expires_in"] ?? object["expiresIn"]) { return now + lifetime }
        if let text = object["expiresOn"] as? String {
            // `az` prints local time as "2026-11-22 07:00:00.000000"; ISO 8601 is accepted too.
            if let date = ISO8601DateFormatter().date(from: text) { return date }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSSSSS"
            return formatter.date(from: text)
        }
        return nil
    }
}
