import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// `"stepUp": "auto"` (#25 item 5): a discovered route's `403` `insufficient_scope` is not forwarded; the route's
/// token cache asks `serve` for a sign-in for the union of the granted and the asked scopes, and the request goes
/// again, once, with that sign-in's token — as a `401` `invalid_token` does with a refreshed one (SPEC §7). The
/// bounds on the sign-ins are the control plane's (``TokenCache``'s flow); the bound on the replay is the
/// exchange's (``ExchangeStateMachine``: one replay, only with the whole body kept, within the route's limit).
extension ProxyConnectionHandler {
    /// Gets the token of a new sign-in for `scopes` for the replay `ticket`: what ``fetchToken(_:claims:)`` does,
    /// with a step-up request, counted by its outcome (`reauthorized`, or `declined` when no token came in time).
    func fetchStepUpToken(_ ticket: ExchangeStateMachine.Ticket, scopes: [String]) {
        guard let exchange, let binding = exchange.binding, let key = binding.tokenKey, let tokens = exchange.tokens
        else { return }
        // Where the upstream asked, without the query: the unit `serve`'s step-ups are bounded by.
        let request = StepUpRequest(scopes: scopes, path: String(exchange.remainder))
        let route = binding.route.prefix
        let metrics = server.metrics
        awaitToken(ticket) { inTime in
            // Too late (the exchange was answered meanwhile: its route's limit), the next request uses it.
            metrics.stepUp(route: route, outcome: inTime == true ? "reauthorized" : "declined")
        } obtain: { () async throws(TokenError) -> AccessToken in
            try await tokens.accessToken(for: key, stepUp: request)
        }
    }
}
