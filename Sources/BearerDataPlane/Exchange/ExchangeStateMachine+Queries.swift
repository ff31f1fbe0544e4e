import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// What the handler and the connection's machine ask an exchange, without changing it.
extension ExchangeStateMachine {
    /// Whether an asynchronous step with `ticket` is still the one this exchange waits for (so its result is worth
    /// preparing; the event itself checks again).
    func awaits(_ ticket: Ticket) -> Bool {
        switch state {
        case .awaitingLocalAnswer(let current), .awaitingToken(_, let current, _), .connecting(_, let current):
            current == ticket
        default:
            false
        }
    }

    /// Whether the upstream's answer is being dropped for a step-up's replay (`"stepUp": "auto"`, SPEC §6.3).
    var awaitsStepUp: Bool {
        if case .discardingRejection(let rejection) = state, case .stepUp = rejection.retry { return true }
        return false
    }

    /// Whether to let the client's next `read()` through, `upstreamWritable` telling whether the upstream connection
    /// in use can take more (asked only while the body streams). Backpressure: while the request body streams, only
    /// what the upstream can take is read.
    func wantsRead(upstreamWritable: @autoclosure () -> Bool) -> Bool {
        switch state {
        case .awaitingToken, .connecting, .streaming, .discardingRejection, .tunnelling:
            // A WebSocket client's frames wait in the socket until the upstream has switched protocols.
            if request.upgrade == .webSocket { return false }
        default:
            return true
        }
        switch state {
        case .awaitingToken(let upload, _, _), .connecting(let upload, _):
            return upload.progress == .ended
        case .streaming(.streaming, _):
            return upstreamWritable()
        default:
            // After the request ends keep reading, so that a client that goes away is noticed (and a pipelined
            // request is queued).
            return true
        }
    }

    /// Whether the last request part this exchange will see has arrived (or nothing more is read for it).
    var requestHasEnded: Bool {
        switch state {
        case .routing(let progress), .local(let progress), .answered(let progress), .streaming(let progress, _):
            progress == .ended
        case .awaitingToken(let upload, _, _), .connecting(let upload, _):
            upload.progress == .ended
        case .awaitingLocalAnswer, .discardingRejection, .tunnelling, .closing, .finished, .modifying:
            true
        }
    }

    /// RFC 9110 §9.2.2: repeating these is harmless.
    static func isIdempotent(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .OPTIONS, .PUT, .DELETE: true
        default: false
        }
    }

    /// Whether response body parts go to the client now (not while a rejected answer is being dropped).
    var forwardsResponseBody: Bool {
        if case .streaming(_, .streaming) = state { return true }
        return false
    }
}
