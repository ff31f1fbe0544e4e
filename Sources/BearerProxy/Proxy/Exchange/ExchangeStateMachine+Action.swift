import NIOCore

extension ExchangeStateMachine {
    /// What the handler does after an event. Results of asynchronous steps come back as events carrying the step's
    /// ``Ticket``.
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
        /// The connection is ready: write the head, these body parts, and the end when `end`, then flush.
        case sendRequest(body: [ByteBuffer], end: Bool)
        /// A connection arrived for a step that is no longer current: keep it for the next request, never leak it
        /// (data-plane pitfall 6).
        case parkConnection
        /// Relay a 1xx response to the client.
        case forwardInformational
        /// Send `100 Continue` to the client on the proxy's own account: the wait for one is over.
        case sendContinue
        /// Write the response head to the client, announcing `Connection: close` unless `keepAlive`.
        case forwardResponseHead(keepAlive: Bool)
        /// The response ended: release the upstream connection, write the end to the client, then go on.
        case finishResponse(release: Release, then: AfterResponse)
        /// Send the request again, once, with a replacement token: release the connection, drop the rejected token
        /// for `.refresh`, and fetch another.
        case replayWithNewToken(release: Release, retry: TokenRetry, ticket: Ticket)
        /// Write the proxy's own answer (the handler builds it), announcing `Connection: close` unless `keepAlive`.
        case answer(keepAlive: Bool, closeUpstream: Bool, then: AfterResponse)
        /// Close the client connection (and the upstream one): a response is underway, so nothing can be answered.
        case closeConnection(closeUpstream: Bool)
        /// Something went wrong that the handler turns into a problem answer (``ExchangeStateMachine/answer()``).
        case fail(Failure)
        /// The upstream switched to WebSocket: answer `101` and join the two connections in a tunnel.
        case switchProtocols
        /// The exchange is over on both sides: close the connection when `close`, else go on with the next request.
        case finish(close: Bool)
    }

    /// What becomes of the upstream connection when its response has ended.
    enum Release: Equatable {
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

    /// Why an exchange is answered with a problem.
    enum Failure: Equatable {
        /// No token within the route's limit.
        case tokenWaitTimedOut
        /// No response head within the route's limit after the request went up in full.
        case responseHeadTimedOut
        /// The request body stopped arriving (the body-stall limit): answered, then the connection closes.
        case bodyStalled
        /// The upstream connection closed (or failed) before a response head.
        case upstreamClosed
        /// A `101` to a request that did not ask for WebSocket (or before its end).
        case unexpectedSwitch
        /// A response `end` without a head.
        case responseWithoutHead
    }
}
