import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

extension ExchangeStateMachine.Failure {
    /// The problem the client gets for this failure (SPEC §8; each problem's status is in ``ProxyError``).
    /// `binding` is the exchange's route, when it got that far; `bodyStall` the connection's body-stall limit.
    func problem(binding: RouteBinding?, bodyStall: TimeAmount) -> ProxyError {
        let display = binding?.origin.display ?? "-"
        let seconds = (binding?.responseTimeout.nanoseconds ?? 0) / 1_000_000_000
        switch self {
        case .token(let error):
            guard let binding, binding.isDiscovered else { return ProxyError(error) }
            return ProxyError(error, discoveredRoute: binding.route.prefix)
        case .tokenWaitTimedOut:
            return .tokenUnavailable(
                detail: "No access token for this route within its \(seconds) s limit; the token request goes on, so "
                    + "a retry may find it.",
                retryAfterSeconds: 1)
        case .upstreamUnreachable(let failure):
            return .upstreamUnreachable(upstream: display, reason: failure.explanation)
        case .responseHeadTimedOut:
            return .upstreamTimeout(upstream: display, seconds: seconds)
        case .callDeadlinePassed(let limit):
            return .deadlineExceeded(upstream: display, milliseconds: limit.nanoseconds / 1_000_000)
        case .bodyStalled:
            let stall = bodyStall.nanoseconds / 1_000_000_000
            return .requestTimeout(detail: "The request body stopped arriving for \(stall) s.")
        case .upstreamStoppedReading:
            return .upstreamStoppedReading(upstream: display, seconds: bodyStall.nanoseconds / 1_000_000_000)
        case .upstreamClosed(.reset):
            return .upstreamReset(upstream: display)
        case .upstreamClosed(let failure):
            // The TLS handshake runs once the TCP connection is up, so its failures arrive here; they are the
            // upstream's identity, not its answer.
            return failure.isTLS
                ? .upstreamUnreachable(upstream: display, reason: failure.explanation)
                : .upstreamProtocolError(upstream: display, reason: failure.explanation)
        case .unexpectedSwitch:
            return .upstreamProtocolError(upstream: display, reason: "unexpected 101 response")
        case .responseWithoutHead:
            return .upstreamProtocolError(upstream: display, reason: "response without a head")
        case .insufficientScope(let scopes, let note):
            return .discoveredStepUpRequired(route: binding?.route.prefix ?? "-", scopes: scopes, note: note)
        case .tokenRefused(let note):
            return .discoveredTokenRefused(route: binding?.route.prefix ?? "-", note: note)
        }
    }
}
