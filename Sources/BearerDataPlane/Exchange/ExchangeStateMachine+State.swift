import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// The facts an exchange's state carries, and what the handler tells it about the request.
extension ExchangeStateMachine {
    package enum State {
        /// The head arrived; the handler is deciding what answers it (one synchronous step).
        case routing(RequestProgress)
        /// One of the proxy's own `/-/` endpoints: the body is hashed as it arrives, answered when it ends.
        case local(RequestProgress)
        /// The local endpoint's answer is being computed (the request has ended).
        case awaitingLocalAnswer(Ticket)
        /// The proxy answered by itself, or the upstream answered in full before the upload ended: the response has
        /// ended, and what remains of the request body is read and dropped.
        case answered(RequestProgress)
        /// Waiting for the route's token; request bytes that arrive meanwhile wait in the upload.
        case awaitingToken(Upload, Ticket, due: NIODeadline)
        /// Getting an upstream connection (pooled or new).
        case connecting(Upload, Ticket)
        /// On an upstream connection: the request streams up, the response down.
        case streaming(RequestProgress, ResponseProgress)
        /// The upstream rejected the token in a way one replay can fix (SPEC §7): its answer is read and kept aside;
        /// when it ends, it is dropped and the kept request goes again with a new token. The request has ended.
        case discardingRejection(Rejection)
        /// The upstream accepted the WebSocket handshake: the connection is a ``Tunnel`` now.
        case tunnelling
        /// A failure after the response head went out: the connection closes, the only honest signal left.
        case closing
        /// Both messages are complete.
        case finished
        /// Transient, while a case's payload is being changed in place (no copy of its buffers).
        case modifying
    }

    /// How far the client's request has arrived.
    enum RequestProgress: Equatable {
        /// The body streams; its next byte is due by then (the body-stall limit).
        case streaming(bodyDue: NIODeadline)
        /// The request's `end` arrived (or nothing more is read from this client).
        case ended
    }

    /// How far the upstream's response has come.
    enum ResponseProgress: Equatable {
        /// No final head yet; once the request is upstream in full, it is due by `due` (the route's limit).
        case awaitingHead(due: NIODeadline?)
        /// The head went to the client; the body streams.
        case streaming(upstreamKeepAlive: Bool)
    }

    /// An answer that rejected the token, read to its end before the one replay. It is kept while it is read: one
    /// that does not end within the route's limit, or is larger than ``ExchangeStateMachine/replayLimit``, cannot
    /// wait for its end and is handled as a rejection that cannot be replayed — forwarded as it came, or answered
    /// by the proxy — so an upstream that drips a `401` forever holds nobody.
    struct Rejection {
        let retry: TokenRetry
        /// The route's limit, running since the request went up in full: the wait for the answer's end is in it.
        let due: NIODeadline?
        package let head: UpstreamResponse
        /// What a rejection that cannot be replayed becomes (``ExchangeStateMachine/responseHead(_:endsWithConnection:retry:stepUp:signsInItself:)``'s
        /// arguments).
        let endsWithConnection: Bool
        package let stepUp: [String]?
        let signsInItself: Bool
        /// The body read so far, and its size.
        package var body: [ByteBuffer] = []
        var bytes = 0
    }

    /// The request while it waits for a token or a connection.
    struct Upload: Equatable {
        var progress: RequestProgress
        /// Body parts that arrived before the connection was ready (at most one read's worth: reads stop meanwhile).
        var pending: [ByteBuffer] = []

        init(progress: RequestProgress, pending: [ByteBuffer] = []) {
            self.progress = progress
            self.pending = pending
        }
    }

    /// Names one asynchronous step (a token, a connection, a local answer); a result carrying another is stale.
    struct Ticket: Hashable {
        let exchange: UInt64
        let attempt: UInt32

        init(exchange: UInt64, attempt: UInt32) {
            self.exchange = exchange
            self.attempt = attempt
        }
    }

    /// How a rejected token is replaced before the one replay (SPEC §7).
    enum TokenRetry: Equatable {
        /// `invalid_token`: drop it and get a new one.
        case refresh
        /// `insufficient_claims`: get one that satisfies this claims request.
        case claims(String)
        /// A discovered route's `403` `insufficient_scope` with `"stepUp": "auto"` (SPEC §6.3): get the token of a new
        /// sign-in for these scopes.
        case stepUp([String])
        /// `use_dpop_nonce` from a DPoP route's upstream with a new `DPoP-Nonce` (RFC 9449 §9): the same token with a
        /// fresh proof that carries the nonce.
        case freshProof

        /// The status of the answers this replay can fix: `403` for a step-up, `401` otherwise (RFC 6750 §3.1).
        var fixes: HTTPResponseStatus {
            if case .stepUp = self { return .forbidden }
            return .unauthorized
        }
    }

    /// Whether the client connection stays open after this exchange (RFC 9112 §9.3).
    enum Persistence: Equatable {
        case keepAlive
        case close
    }

    /// What `Expect: 100-continue` (RFC 9110 §10.1.1) asked for, and whether the upstream's `100` was relayed.
    enum Expectation: Equatable {
        case none
        case awaitingContinue
        case continued
    }

    /// What the request is, as far as the lifecycle cares.
    struct Request {
        package var method: HTTPMethod
        /// The client asked to keep the connection (RFC 9112 §9.3).
        var keepAlive: Bool
        var expectsContinue: Bool
        var upgrade: WebSocketUpgrade.Requested
        /// RFC 9110 §15.2: 1xx responses are forwarded, except to HTTP/1.0 clients.
        var forwardsInformational: Bool
        /// The client's own deadline for the call, from its head's arrival (a gRPC call's `grpc-timeout`,
        /// ``GRPCTimeout``): the proxy's wait for the upstream's answer ends by then, whatever the route allows.
        var callLimit: TimeAmount?

        init(
            method: HTTPMethod, keepAlive: Bool = true, expectsContinue: Bool = false,
            upgrade: WebSocketUpgrade.Requested = .none, forwardsInformational: Bool = true,
            callLimit: TimeAmount? = nil
        ) {
            self.method = method
            self.keepAlive = keepAlive
            self.expectsContinue = expectsContinue
            self.upgrade = upgrade
            self.forwardsInformational = forwardsInformational
            self.callLimit = callLimit
        }
    }

    /// The replays an exchange may make, each at most once.
    struct Replays: OptionSet {
        package let rawValue: UInt8
        /// Again on a fresh connection: a pooled one was closed before it answered (SPEC §8).
        static let staleConnection = Replays(rawValue: 1)
        /// Again with a new token after a fixable `401` (SPEC §7).
        static let newToken = Replays(rawValue: 2)

        init(rawValue: UInt8) {
            self.rawValue = rawValue
        }
    }

    /// The copy of a proxied request's body kept for a replay with a new token.
    enum KeptBody: Equatable {
        /// The route sends no token: nothing to replay.
        case notNeeded
        case kept([ByteBuffer], bytes: Int)
        /// It grew past ``ExchangeStateMachine/replayLimit``: streamed only (a `401` then passes through).
        case tooLarge
    }
}
