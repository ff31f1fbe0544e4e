import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The on-behalf-of routes' tokens: per route settings, a ``SubjectTokenCaches`` whose caches exchange each caller's
/// token through the account's confidential client. Owned by the account runtime, so a new account (a reload that
/// changes it) starts with none, and kept across reloads that keep the account and the route's settings. Held in
/// memory only: the subjects are the callers' tokens.
package final class OnBehalfOfTokens: Sendable {
    /// The account's client, when the account is a `client-credentials` one (`check` refuses on-behalf-of routes
    /// with any other).
    private let client: ClientCredentialsFlow?
    private let environment: [String: String]
    private let now: @Sendable () -> Date
    private let uptime: (@Sendable () -> Duration)?
    private let observer: any TokenCacheObserver
    private let caches = Mutex<[OnBehalfOfSettings: SubjectTokenCaches]>([:])

    init(
        flow: any SignInFlow, environment: [String: String], logger: Logger, metrics: ProxyMetrics?,
        now: @escaping @Sendable () -> Date, uptime: (@Sendable () -> Duration)?
    ) {
        client = flow as? ClientCredentialsFlow
        self.environment = environment
        self.now = now
        self.uptime = uptime
        observer = TokenEventRecorder(flow: "on-behalf-of", logger: logger, metrics: metrics)
    }

    /// The subjects' caches of `configuration`'s on-behalf-of routes, by prefix.
    package func caches(for configuration: Configuration) -> [String: SubjectTokenCaches] {
        var byPrefix: [String: SubjectTokenCaches] = [:]
        for route in configuration.routes.routes {
            guard case .onBehalfOf(let settings) = route.auth else { continue }
            byPrefix[route.prefix] = caches(for: settings)
        }
        return byPrefix
    }

    private func caches(for settings: OnBehalfOfSettings) -> SubjectTokenCaches {
        caches.withLock { caches in
            if let kept = caches[settings] { return kept }
            let made = SubjectTokenCaches(maximum: settings.maximumSubjects) { [self] subject in
                TokenCache(flow: flow(settings, subject: subject), now: now, uptime: uptime, observer: observer)
            }
            caches[settings] = made
            return made
        }
    }

    /// The exchange of `subject`, or a flow that fails with the reason there is none.
    private func flow(_ settings: OnBehalfOfSettings, subject: String) -> any SignInFlow {
        guard let client else {
            return UnavailableFlow(
                error: .misconfigured(reason: "an on-behalf-of route needs the \"client-credentials\" flow"))
        }
        do throws(TokenError) {
            return try OnBehalfOfFlow(client: client, settings: settings, subject: subject, environment: environment)
        } catch {
            return UnavailableFlow(error: error)
        }
    }

    /// Forgets every caller whose tokens have all expired, with no exchange under way or back-off running (the
    /// maintenance sweep).
    func forgetSpent() {
        let all = caches.withLock { Array($0.values) }
        for subjects in all { subjects.forgetSpent() }
    }

    /// The callers kept per route settings, for `status`.
    package func subjectCounts(for configuration: Configuration) -> [String: Int] {
        caches(for: configuration).mapValues(\.count)
    }
}

/// A flow that cannot produce a token, and says why at each request.
private struct UnavailableFlow: SignInFlow {
    let name = "on-behalf-of"
    let error: TokenError

    func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken { throw error }
}
