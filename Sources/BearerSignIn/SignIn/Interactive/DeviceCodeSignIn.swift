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

/// The device authorization grant (RFC 8628; protocols.md §3): show a code, let the person enter it on another
/// device, poll the token endpoint until they have.
package struct DeviceCodeSignIn: InteractiveSignIn {
    static let grantType = "urn:ietf:params:oauth:grant-type:device_code"

    package let client: OAuthClient
    package let provider: IdentityProviderClient
    /// Waits between polls; tests pass one that records the interval and returns at once.
    package let sleep: @Sendable (Duration) async throws -> Void
    /// The monotonic clock the code's lifetime is measured on: a wall clock that steps must neither end the wait
    /// early nor stretch it.
    package let uptime: @Sendable () -> Duration
    /// The account's DPoP binding (RFC 9449), when its `tokenType` is not `bearer`: every poll carries a proof, so
    /// the refresh token issued is bound to the key.
    package let dpop: DPoPBinding?

    package var needsPerson: Bool { true }

    package func signIn(
        console: any SignInConsole, scopeSets: [ScopeSet], options: SignInOptions
    ) async throws(SignInFailure) -> SignedInAccount {
        let endpoints = try await provider.signInEndpoints(for: client.endpoint)
        guard let url = endpoints.deviceAuthorization else {
            throw SignInFailure(
                .misconfigured, "The identity provider has no device authorization endpoint; use \"flow\": \"browser\"."
            )
        }
        let authorization = try await authorize(at: url)
        console.show("")
        console.show(authorization.instructions)
        console.show("")
        let deadline = uptime() + .seconds(authorization.expiresIn)
        var interval = max(1, authorization.interval)
        var reportedOutage = false
        while true {
            do {
                try await sleep(.seconds(interval))
            } catch {
                throw .cancelled
            }
            guard uptime() < deadline else { throw expired(authorization) }
            console.stillWaiting(
                "Waiting for you to enter the code \(authorization.userCode) at \(authorization.verificationURI)")
            var form: [(String, String)] = [
                ("grant_type", Self.grantType), ("client_id", client.clientId),
                ("device_code", authorization.deviceCode),
            ]
            form += client.extraParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            do {
                let response = try await provider.requestToken(
                    at: endpoints.token, form: form, dpop: dpop?.ifApplies(to: endpoints))
                return try SignedInAccount(response)
            } catch let failure as TokenEndpointCallFailure {
                switch failure {
                case .unreachable(let error):
                    // A network blip during a wait of minutes is no reason to give up; the deadline still holds.
                    if !reportedOutage { console.show("(\(SignInFailure(error).message) Still trying.)") }
                    reportedOutage = true
                case .rejected(let failure):
                    switch failure.error {
                    case "authorization_pending":
                        continue
                    case "slow_down":
                        interval += 5  // RFC 8628 §3.5
                    case "authorization_declined", "access_denied":
                        throw SignInFailure(
                            .rejected, "The sign-in was declined in the browser; run: bearer-proxy login to try again.")
                    case "expired_token", "code_expired":
                        throw expired(authorization)
                    case "bad_verification_code":
                        throw SignInFailure(
                            .rejected,
                            "The identity provider no longer knows this sign-in code; run: bearer-proxy login again.")
                    default:
                        if failure.status == 429 || failure.status >= 500 {
                            interval += 5
                            continue
                        }
                        throw SignInFailure(failure.tokenError)
                    }
                }
            } catch let failure as SignInFailure {
                throw failure
            } catch {
                throw SignInFailure(.unavailable, "Sign-in failed: \(error)")
            }
        }
    }

    private func expired(_ authorization: DeviceAuthorization) -> SignInFailure {
        let minutes = max(1, authorization.expiresIn / 60)
        return SignInFailure(
            .timedOut,
            "The code \(authorization.userCode) expired before the sign-in was completed (it lasts \(minutes) min); "
                + "run: bearer-proxy login for a new one.")
    }

    private func authorize(at url: String) async throws(SignInFailure) -> DeviceAuthorization {
        var form: [(String, String)] = [
            ("client_id", client.clientId), ("scope", RefreshTokenGrant.userScopes.joined(separator: " ")),
        ]
        form += client.extraParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let answer: (status: Int, headers: HTTPHeaders, body: Data)
        do {
            answer = try await provider.postForm(to: url, form: form)
        } catch {
            throw SignInFailure(error)
        }
        guard answer.status == 200 else {
            let failure = TokenEndpointFailure(status: answer.status, json: answer.body, retryAfter: nil)
            throw SignInFailure(failure.tokenError)
        }
        guard let authorization = DeviceAuthorization(json: answer.body) else {
            throw SignInFailure(.unavailable, "The device authorization endpoint answered in an unknown way.")
        }
        return authorization
    }

    package init(
        client: OAuthClient, provider: IdentityProviderClient,
        sleep: @escaping @Sendable (Duration) async throws -> Void, uptime: @escaping @Sendable () -> Duration,
        dpop: DPoPBinding? = nil
    ) {
        self.client = client
        self.provider = provider
        self.sleep = sleep
        self.uptime = uptime
        self.dpop = dpop
    }
}
