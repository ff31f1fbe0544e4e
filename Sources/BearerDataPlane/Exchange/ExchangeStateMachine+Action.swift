import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

extension ExchangeStateMachine {
    /// What the handler does after an event: every event returns one, and ``ProxyConnectionHandler/run(_:arrived:)``
    /// performs each of them, none out of place. Results of asynchronous steps come back as events carrying the
    /// step's ``Ticket``; what an event brought (a response head, a body part, trailers) travels in its action.
    enum Action: Equatable {
        case none
        /// Write this body part upstream (flushed when the read completes).
        case forwardBody(ByteBuffer)
        /// Hash this body part for the local endpoint.
        case consumeLocally(ByteBuffer)
        /// Write the request's end upstream and flush.
        case forwardEnd
        /// Ask the local endpoint for its answer.
        case answerLocally(Ticket)
        /// Get the route's token (satisfying `claims` when set).
        case fetchToken(Ticket, claims: String?)
        /// Get an upstream connection for the request head built with the token.
        case connect(Ticket)
        /// The connection that arrived is the one asked for: write the head, these body parts, and the end when
        /// `end`, then flush.
        case sendRequest(body: [ByteBuffer], end: Bool)
        /// A connection arrived for a step that is no longer current: keep it for the next request, never leak it
        /// (data-plane pitfall 6).
        case parkConnection
        /// Relay a 1xx response (its status only) to the client.
        case forwardInformational(HTTPResponseStatus)
        /// Send `100 Continue` to the client on the proxy's own account: the wait for one is over.
        case sendContinue
        /// Write the upstream's response head to the client (rewritten by ``Forwarding``), announcing
        /// `Connection: close` unless `keepAlive`.
        case forwardResponseHead(UpstreamResponse, keepAlive: Bool)
        /// Write a rejected answer that cannot be replayed after all to the client, as ``forwardResponseHead(_:keepAlive:)``
        /// would, with the body read so far; the rest streams as any response's does.
        case forwardRejection(UpstreamResponse, keepAlive: Bool, body: [ByteBuffer])
        /// Write this response body part to the client (flushed when the upstream's read completes).
        case forwardResponseBody(ByteBuffer)
        /// The response ended: release the upstream connection, write the end to the client, then go on.
        case finishResponse(trailers: ByteBuffer?, release: Release, then: AfterResponse)
        /// Send the request again, once, with a replacement token: release the connection, drop the rejected token
        /// for `.refresh`, and fetch another (for `.stepUp`, from a new sign-in for wider scopes).
        case replayWithNewToken(release: Release, retry: TokenRetry, ticket: Ticket)
        /// Write the proxy's own complete answer, announcing `Connection: close` unless `keepAlive`; close the
        /// upstream connection in use first when `closeUpstream`.
        case answer(Answer, keepAlive: Bool, closeUpstream: Bool, then: AfterResponse)
        /// Close the client connection (and the upstream one): a response is underway, so nothing can be answered.
        case closeConnection(closeUpstream: Bool)
        /// The upstream switched to WebSocket with this head: answer `101` and join the two connections in a tunnel.
        case switchProtocols(UpstreamResponse)
        /// The exchange is over on both sides: close the connection when `close`, else go on with the next request.
        case finish(close: Bool)
        /// The client went away mid-exchange: close the upstream connection when `closeUpstream` (its response may
        /// be half-read, so it is never pooled); the exchange counts as 499 unless its response had ended.
        case abandon(closeUpstream: Bool, responseEnded: Bool)
        /// An event that cannot happen in the state it came in — a bug, never a hang: count it
        /// (`bearer_proxy_state_errors_total{machine="exchange"}`) and close both connections.
        case abort
    }

    /// What becomes of the upstream connection when its response has ended.
    package enum Release: Equatable {
        /// Both messages on it are complete: back to the pool.
        case park
        /// Request bytes were left unsent (an early answer), or the upstream will close it (data-plane pitfall 5).
        case close
    }

    /// What follows a complete response.
    enum AfterResponse: Equatable {
        /// The request had ended too: the exchange is over (``Action/finish(close:)``'s meaning).
        case finished(close: Bool)
        /// The request body still streams: it is read and dropped, and the exchange finishes at its end.
        case awaitingRequestEnd
    }

    /// What the proxy answers by itself.
    package enum Answer: Equatable {
        /// A refusal the handler found (the head's syntax, its route, its method, a request that cannot be read).
        case problem(ProxyError)
        /// A failure the machine decided on; ``ExchangeStateMachine/Failure/problem(binding:bodyStall:)`` words it.
        case failure(Failure)
        /// A complete response: a CORS preflight, one of the proxy's own endpoints.
        case response(LocalResponse)
    }

    /// Why an exchange is answered with a problem.
    package enum Failure: Equatable {
        /// The token cache could not give the route a token.
        case token(TokenError)
        /// No token within the route's limit.
        case tokenWaitTimedOut
        /// No upstream connection could be made.
        case upstreamUnreachable(ConnectionFailure)
        /// No response head within the route's limit after the request went up in full.
        case responseHeadTimedOut
        /// The client's own deadline for the call (``Request/callLimit``) passed before the upstream's answer began:
        /// its token, its connection or its response head was still awaited.
        case callDeadlinePassed(TimeAmount)
        /// The request body stopped arriving (the body-stall limit): answered, then the connection closes.
        case bodyStalled
        /// The upstream took none of the request body for the body-stall limit: answered (or closed, once a response
        /// has begun), then the connection closes.
        case upstreamStoppedReading
        /// The upstream connection closed (or failed, `.reset` when it simply went away) before a response head.
        case upstreamClosed(ConnectionFailure)
        /// A `101` to a request that did not ask for WebSocket (or before its end).
        case unexpectedSwitch
        /// A response `end` without a head.
        case responseWithoutHead
        /// A discovered route's upstream answered `403` `insufficient_scope`: a sign-in for these scopes is needed.
        /// `note` says why `serve`'s own sign-in for them (`"stepUp": "auto"`) gave no token in time, when it tried.
        case insufficientScope(scopes: [String], note: String? = nil)
        /// A discovered route's upstream refused the token (`401` with a `Bearer` challenge) and the proxy does not
        /// replay: `note` says why. Answered by the proxy, the upstream's challenge never reaches the client.
        case tokenRefused(note: String)
    }

    /// What answers a request, decided by the handler's routing step (SPEC §8, §9).
    enum Routing: Equatable {
        /// One of the proxy's own `/-/` endpoints.
        case local
        /// A route's upstream. `sendsToken` whether the route sends a token (then the body is kept for one
        /// replay); `needsToken` when it does and none is cached; `limit` the route's time limit.
        case upstream(sendsToken: Bool, needsToken: Bool, limit: TimeAmount)
        /// Answered at once, the request read to its end (the proxy still starting, a CORS preflight).
        case answer(Answer)
        /// Refused for what its head says: answered, and nothing after it is read (RFC 9112 §6.3).
        case refuse(ProxyError)
    }
}

extension ExchangeStateMachine.Action {
    /// Whether the exchange is over once this action is performed — its response written and its request read to
    /// the end — and then whether it wants the connection closed; nil when it goes on.
    var endsExchange: Bool? {
        switch self {
        case .finish(let close), .finishResponse(_, _, .finished(let close)), .answer(_, _, _, .finished(let close)):
            close
        default:
            nil
        }
    }

    /// This action, ending the exchange as the connection decided: closing it after the answer when `close`.
    func ending(close: Bool) -> Self {
        switch self {
        case .finish: .finish(close: close)
        case .finishResponse(let trailers, let release, .finished):
            .finishResponse(trailers: trailers, release: release, then: .finished(close: close))
        case .answer(let answer, let keepAlive, let closeUpstream, .finished):
            .answer(answer, keepAlive: keepAlive && !close, closeUpstream: closeUpstream, then: .finished(close: close))
        default: self
        }
    }
}
