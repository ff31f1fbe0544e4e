import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// The exchange's time limits: the body stall, the token wait and the response head (SPEC §8).
extension ExchangeStateMachine {
    /// The earliest deadline that applies in this state.
    var nextDeadline: NIODeadline? {
        guard state.awaitsAnswer else { return stateDeadline }
        return Self.earliest(stateDeadline, callDue)
    }

    /// The earliest of the state's own deadlines (the route's and the body's).
    private var stateDeadline: NIODeadline? {
        switch state {
        case .routing(let progress), .local(let progress), .answered(let progress):
            return progress.bodyDue
        case .awaitingToken(let upload, _, let due):
            return Self.earliest(upload.progress.bodyDue, due)
        case .connecting(let upload, _):
            return upload.progress.bodyDue
        case .streaming(let progress, .awaitingHead(let due)):
            return Self.earliest(progress.bodyDue, due)
        case .streaming(let progress, .streaming):
            return progress.bodyDue
        case .discardingRejection(let rejection):
            return rejection.due
        case .awaitingLocalAnswer, .tunnelling, .closing, .finished, .modifying:
            return nil
        }
    }

    static func earliest(_ first: NIODeadline?, _ second: NIODeadline?) -> NIODeadline? {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }
}

extension ExchangeStateMachine.RequestProgress {
    var bodyDue: NIODeadline? {
        if case .streaming(let due) = self { return due }
        return nil
    }
}

extension ExchangeStateMachine.State {
    /// Whether the proxy is waiting for the upstream's answer to begin — its token, its connection, its response head,
    /// or the end of a rejection it means to replay: what the client's own deadline for the call bounds.
    var awaitsAnswer: Bool {
        switch self {
        case .awaitingToken, .connecting, .streaming(_, .awaitingHead), .discardingRejection: true
        case .routing, .local, .awaitingLocalAnswer, .answered, .streaming(_, .streaming), .tunnelling, .closing,
            .finished, .modifying:
            false
        }
    }

    /// When the request body's next byte is due, while it streams.
    var bodyDue: NIODeadline? {
        switch self {
        case .routing(let progress), .local(let progress), .answered(let progress), .streaming(let progress, _):
            progress.bodyDue
        case .awaitingToken(let upload, _, _), .connecting(let upload, _):
            upload.progress.bodyDue
        case .awaitingLocalAnswer, .discardingRejection, .tunnelling, .closing, .finished, .modifying:
            nil
        }
    }

    /// Sets the request's progress in whichever state carries it (a no-op in the others).
    mutating func setRequestProgress(_ progress: ExchangeStateMachine.RequestProgress) {
        switch self {
        case .routing: self = .routing(progress)
        case .local: self = .local(progress)
        case .answered: self = .answered(progress)
        case .streaming(_, let response): self = .streaming(progress, response)
        case .awaitingToken(var upload, let ticket, let tokenDue):
            upload.progress = progress
            self = .awaitingToken(upload, ticket, due: tokenDue)
        case .connecting(var upload, let ticket):
            upload.progress = progress
            self = .connecting(upload, ticket)
        case .awaitingLocalAnswer, .discardingRejection, .tunnelling, .closing, .finished, .modifying:
            break
        }
    }
}
