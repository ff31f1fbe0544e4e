import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging

/// Logs one line per token acquisition (scope set, outcome, duration — SPEC §10) and counts it in the metrics.
package struct TokenEventRecorder: TokenCacheObserver {
    package let flow: String
    package let logger: Logger
    package let metrics: ProxyMetrics?

    package func tokenFetched(
        _ request: TokenRequest, outcome: Result<AccessToken, TokenError>, duration: Duration, background: Bool
    ) {
        let label = Self.outcome(outcome)
        metrics?.tokenRequest(flow: flow, outcome: label)
        if background { metrics?.tokenRefresh(outcome: label) }
        var metadata: Logger.Metadata = [
            "scopes": .string(request.scopes.description), "outcome": .string(label),
            "duration-ms": .stringConvertible(
                duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000),
            "background": .stringConvertible(background), "flow": .string(flow),
        ]
        if request.claims != nil { metadata["claims-challenge"] = "true" }
        switch outcome {
        case .success(let token):
            metadata["expires-on"] = .stringConvertible(token.expiresOn)
            logger.info("token acquired", metadata: metadata)
        case .failure(let error):
            // TokenError descriptions carry the provider's error code and summary, never a credential.
            metadata["reason"] = .string("\(error)")
            logger.warning("token request failed", metadata: metadata)
        }
    }

    package static func outcome(_ outcome: Result<AccessToken, TokenError>) -> String {
        switch outcome {
        case .success: "success"
        case .failure(.signInRequired): "sign_in_required"
        case .failure(.providerUnavailable): "unavailable"
        case .failure(.misconfigured): "misconfigured"
        case .failure(.subjectRefused): "subject_refused"
        case .failure(.consentRequired): "consent_required"
        }
    }

    package init(flow: String, logger: Logger, metrics: ProxyMetrics?) {
        self.flow = flow
        self.logger = logger
        self.metrics = metrics
    }
}
