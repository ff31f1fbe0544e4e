import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Microsoft Entra External ID native authentication, V1 (protocols.md §1): `initiate` → `challenge` → `token`,
/// always offering `redirect` and always sending the latest continuation token — what the MSAL native-auth
/// tutorial's `signIn(username:password:)` sends.
package struct NativeSignIn: InteractiveSignIn {
    /// Wrong one-time passcodes accepted before giving up.
    static let codeAttempts = 3

    package let account: NativeAccount
    package let provider: IdentityProviderClient
    package let environment: [String: String]

    private var messages: NativeAuthMessages {
        NativeAuthMessages(username: account.username, clientId: account.client.clientId)
    }

    /// `password redirect` or `oob redirect`: the method configured, and the browser fallback the API requires.
    var challengeTypes: String {
        account.challenge == .password ? "password redirect" : "oob redirect"
    }

    private var baseURL: String {
        switch account.client.endpoint {
        case .authority(let authority), .issuer(let authority):
            authority.hasSuffix("/") ? String(authority.dropLast()) : authority
        }
    }

    /// A one-time passcode must be typed; a password may come from the environment.
    package var needsPerson: Bool {
        guard account.challenge == .password, let name = account.passwordEnv else { return true }
        return (environment[name] ?? "").isEmpty
    }

    package func signIn(
        console: any SignInConsole, scopeSets: [ScopeSet], options: SignInOptions
    ) async throws(SignInFailure) -> SignedInAccount {
        console.show("Signing in \(account.username) (Microsoft Entra native authentication)…")
        var restarted = false
        while true {
            let challenge = try await start()
            switch challenge {
            case .password(let continuationToken):
                let password = try await password(console)
                return try await redeem(
                    continuationToken, grant: [("grant_type", "password"), ("password", password)])
            case .oneTimePasscode(let continuationToken, let target, let length):
                do {
                    return try await oneTimePasscode(
                        console, continuationToken: continuationToken, target: target, length: length)
                } catch let failure as CodeExpired {
                    // The continuation token (and the code with it) expired while the person looked for the email:
                    // start over once, which sends a new code.
                    guard !restarted else { throw failure.failure }
                    restarted = true
                    console.show("The code has expired; sending a new one.")
                } catch let failure as SignInFailure {
                    throw failure
                } catch {
                    throw SignInFailure(.unavailable, "Sign-in failed: \(error)")
                }
            default:
                throw SignInFailure(.unavailable, "Native authentication answered the challenge in an unknown way.")
            }
        }
    }

    /// `initiate` then `challenge`: the server's choice of method (and, for one-time passcodes, the email sent).
    private func start() async throws(SignInFailure) -> NativeAuthAnswer {
        let initiated = try await post(
            "initiate", [("username", account.username), ("challenge_type", challengeTypes)])
        guard case .proceed(let continuationToken) = initiated else {
            throw SignInFailure(.unavailable, "Native authentication's initiate answered in an unknown way.")
        }
        return try await challenge(continuationToken)
    }

    private func challenge(_ continuationToken: String) async throws(SignInFailure) -> NativeAuthAnswer {
        try await post(
            "challenge", [("continuation_token", continuationToken), ("challenge_type", challengeTypes)])
    }

    /// The password: from the variable named by `passwordEnv`, else asked at a hidden prompt.
    private func password(_ console: any SignInConsole) async throws(SignInFailure) -> String {
        if let name = account.passwordEnv, let value = environment[name], !value.isEmpty { return value }
        guard console.canAsk else {
            let variable = account.passwordEnv.map { "set \($0)" } ?? "set \"passwordEnv\" in routes.json"
            throw SignInFailure(
                .misconfigured,
                "No terminal to ask the password of \(account.username) at: \(variable), or run "
                    + "bearer-proxy login in a terminal.")
        }
        let answer = try await console.ask("Password for \(account.username): ", hidden: true)
        guard !answer.isEmpty else { throw SignInFailure(.rejected, "No password given.") }
        return answer
    }

    /// Thrown inside the one-time passcode loop when the server says the sign-in expired.
    private struct CodeExpired: Error {
        var failure: SignInFailure
    }

    private func oneTimePasscode(
        _ console: any SignInConsole, continuationToken: String, target: String?, length: Int?
    ) async throws -> SignedInAccount {
        guard console.canAsk else {
            throw SignInFailure(
                .misconfigured, "The one-time passcode must be typed in a terminal: run bearer-proxy login in one.")
        }
        var continuationToken = continuationToken
        var target = target
        var attempts = 0
        while true {
            let digits = length.map { "the \($0)-digit code" } ?? "the code"
            console.show("A one-time passcode was sent to \(target ?? "your email address").")
            let answer = try await console.ask(
                "Enter \(digits) (or \"resend\" for a new one): ", hidden: false
            ).trimmingWhitespace()
            if answer.isEmpty { continue }
            if answer.lowercased() == "resend" {
                guard case .oneTimePasscode(let next, let newTarget, _) = try await challenge(continuationToken) else {
                    throw SignInFailure(.unavailable, "Native authentication did not send a new code.")
                }
                continuationToken = next
                target = newTarget ?? target
                console.show("A new code is on its way; the previous one no longer works.")
                continue
            }
            do {
                return try await redeemOrFail(continuationToken, grant: [("grant_type", "oob"), ("oob", answer)])
            } catch let failure as TokenEndpointFailure {
                switch (failure.error, failure.suberror) {
                case ("invalid_grant", "invalid_oob_value"):
                    attempts += 1
                    guard attempts < Self.codeAttempts else { throw messages.failure(failure) }
                    continuationToken = failure.continuationToken ?? continuationToken
                    console.show("That code is not right; check it and try again (or type \"resend\").")
                case ("expired_token", _):
                    throw CodeExpired(failure: messages.failure(failure))
                default:
                    throw messages.failure(failure)
                }
            }
        }
    }

    private func redeem(_ continuationToken: String, grant: [(String, String)]) async throws(SignInFailure)
        -> SignedInAccount
    {
        do {
            return try await redeemOrFail(continuationToken, grant: grant)
        } catch let failure as TokenEndpointFailure {
            throw messages.failure(failure)
        } catch let failure as SignInFailure {
            throw failure
        } catch {
            throw SignInFailure(.unavailable, "Sign-in failed: \(error)")
        }
    }

    /// The `token` call; an error answer is thrown as the ``TokenEndpointFailure`` itself so callers can retry.
    private func redeemOrFail(_ continuationToken: String, grant: [(String, String)]) async throws -> SignedInAccount {
        var form: [(String, String)] = [
            ("client_id", account.client.clientId), ("continuation_token", continuationToken),
        ]
        form += grant
        form += [
            ("username", account.username), ("scope", RefreshTokenGrant.userScopes.joined(separator: " ")),
            ("client_info", "true"), ("challenge_type", challengeTypes),
        ]
        do {
            let response = try await provider.requestToken(at: baseURL + "/oauth2/v2.0/token", form: form)
            return try SignedInAccount(response)
        } catch let failure as TokenEndpointCallFailure {
            switch failure {
            case .unreachable(let error): throw SignInFailure(error)
            case .rejected(let failure): throw failure
            }
        }
    }

    private func post(_ endpoint: String, _ parameters: [(String, String)]) async throws(SignInFailure)
        -> NativeAuthAnswer
    {
        let answer: (status: Int, headers: HTTPHeaders, body: Data)
        do {
            answer = try await provider.postForm(
                to: baseURL + "/oauth2/v2.0/" + endpoint, form: [("client_id", account.client.clientId)] + parameters)
        } catch {
            throw SignInFailure(error)
        }
        if answer.status == 200 {
            guard let decoded = NativeAuthAnswer(json: answer.body) else {
                throw SignInFailure(.unavailable, "Native authentication's \(endpoint) answered in an unknown way.")
            }
            if case .redirect(let reason) = decoded { throw messages.redirect(reason: reason) }
            return decoded
        }
        let retryAfter = RetryAfter.seconds(answer.headers.first(name: "retry-after"))
        throw messages.failure(TokenEndpointFailure(status: answer.status, json: answer.body, retryAfter: retryAfter))
    }

    package init(account: NativeAccount, provider: IdentityProviderClient, environment: [String: String]) {
        self.account = account
        self.provider = provider
        self.environment = environment
    }
}
