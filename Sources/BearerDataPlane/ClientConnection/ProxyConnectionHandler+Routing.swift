import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// What answers a request: a refusal, a preflight, one of the proxy's own endpoints, or a route's upstream with
/// its token (SPEC §8, §9).
extension ProxyConnectionHandler {
    func begin(_ request: ClientRequest) {
        let head = request.line
        let id = Self.clientRequestID(request) ?? loop.nextRequestID()
        let installed = server.installed.beginExchange()
        let exchange = Exchange(id: id, request: request, proxy: installed, started: now)
        self.exchange = exchange
        let upgrade = WebSocketUpgrade.requested(request)
        let began = connection.begin(
            ExchangeStateMachine.Request(
                method: head.method, keepAlive: request.keepAlive, expectsContinue: exchange.expectsContinue,
                upgrade: upgrade, forwardsInformational: head.version.minor >= 1),
            now: now)
        // A head while an exchange is in progress (the machine queues those): a bug, counted when the connection
        // ends, and the connection closes rather than answer two requests at once.
        guard began == .none else { return run(began) }
        guard let proxy = installed else { return decide(.answer(.problem(.starting))) }
        let target: RequestTarget
        switch proxy.requestGuard.check(request) {
        case .refuse(let error):
            return refuseHead(error)
        case .preflight(let origin, let method, let requestedHeaders):
            return decide(.answer(.response(CORS.preflight(origin: origin, method: method, headers: requestedHeaders))))
        case .allow(let allowed, let corsOrigin):
            target = allowed
            exchange.target = allowed
            exchange.corsOrigin = corsOrigin
        }
        if LocalEndpointPaths.owns(target.path) {
            exchange.routeLabel = "-"
            exchange.localBody = LocalBody()
            return decide(.local)
        }
        // Root-level OAuth metadata for a discovered route (RFC 9728 §3.1): never forwarded — not even to a `/`
        // route — nor answered, so a local client starts no OAuth of its own (#25).
        if let resource = DiscoveredRouteGate.insertedResourcePath(target.path),
            let owner = proxy.configuration.routes.match(path: resource[...]),
            proxy.bindings[owner.position].isDiscovered
        {
            exchange.routeLabel = proxy.bindings[owner.position].route.prefix
            return refuseHead(.oauthMetadataNotForwarded(route: proxy.bindings[owner.position].route.prefix))
        }
        guard let match = proxy.configuration.routes.match(path: target.path) else {
            return refuseHead(Self.noRoute(target.path, bindings: proxy.bindings))
        }
        let binding = proxy.bindings[match.position]
        // Read through the binding, not a local copy of the route: copying `Route` retains its dozen fields.
        exchange.routeLabel = binding.route.prefix
        // Before anything of the route is used — its token above all (#26 item 3).
        if let refusal = Self.routeRefusal(request, binding: binding, target: target, remainder: match.remainder) {
            return refuseHead(refusal)
        }
        exchange.route(to: binding, remainder: match.remainder, query: target.query)
        var cached: AccessToken?
        let sendsToken = binding.sendsToken
        if sendsToken, let key = binding.tokenKey {
            cached = loop.cachedToken(for: binding, key: key, in: binding.tokens(proxy))
            if cached != nil {
                server.metrics.tokenCacheHits.increment()
            } else {
                server.metrics.tokenCacheMisses.increment()
            }
        }
        if !sendsToken || cached != nil {
            exchange.prepare(
                client: request, token: cached, clientAddress: clientAddress, webSocket: upgrade == .webSocket,
                into: &requestHeads)
        }
        decide(
            .upstream(sendsToken: sendsToken, needsToken: sendsToken && cached == nil, limit: binding.responseTimeout))
    }

    /// The refusal of a path no route matches: an OAuth client's own sign-in fallbacks, while discovered routes sign
    /// in for their clients, are told the command that does it (a client pointed at a discovered route before its
    /// sign-in tries them, and would show the person only "no route"); anything else is no route.
    static func noRoute(_ path: Substring, bindings: [RouteBinding]) -> ProxyError {
        if DiscoveredRouteGate.isClientOAuthFallback(path) {
            let discovered = bindings.filter { $0.isDiscovered && !$0.usesAccount }.map(\.route.prefix)
            if !discovered.isEmpty { return .clientOAuthNotOffered(path: String(path), routes: discovered) }
        }
        return .noRoute(path: String(path))
    }

    /// Tells the exchange what answers its request, and runs what follows.
    private func decide(_ routing: ExchangeStateMachine.Routing) {
        let now = self.now
        run(connection.exchangeEvent { $0.route(routing, now: now) })
    }

    /// Refuses a request for what its head says — its syntax, framing, Host, origin, route or method — before any of
    /// it goes anywhere: answers and closes, reading nothing after it (RFC 9112 §6.3; #28). A front proxy that
    /// framed the refused request differently would have a second request hidden in what follows; and nothing the
    /// client sends after a refusal is worth the risk of reading it as a request.
    private func refuseHead(_ error: ProxyError) {
        decide(.refuse(error))
    }

    /// The slow path: no usable cached token. Reads stay paused (there is no upstream) until it is known.
    func fetchToken(_ ticket: ExchangeStateMachine.Ticket, claims: String?) {
        guard let exchange, let scopes = exchange.binding?.tokenKey, let tokens = exchange.tokens else { return }
        awaitToken(ticket) { () async throws(TokenError) -> AccessToken in
            try await tokens.accessToken(for: scopes, claims: claims)
        }
    }

    /// Waits for the token `obtain` gets, off the event loop, and tells the exchange; `settled` hears whether it
    /// came in time for the exchange (nil when it failed).
    func awaitToken(
        _ ticket: ExchangeStateMachine.Ticket, settled: @escaping (_ inTime: Bool?) -> Void = { _ in },
        obtain: @escaping @Sendable () async throws(TokenError) -> AccessToken
    ) {
        guard let exchange, exchange.binding != nil else { return }
        let webSocket = connection.exchange?.request.upgrade == .webSocket
        // The one bridge from the event loop into the token cache's async world; the future is consumed right
        // here, so the task it runs on is not a stray one.
        context.eventLoop.makeFutureWithTask { () async -> Result<AccessToken, TokenError> in
            do throws(TokenError) {
                return .success(try await obtain())
            } catch {
                return .failure(error)
            }
        }
        .assumeIsolated()
        .whenSuccess { [weak self] result in
            guard let self, !self.removed else {
                // The client has left: nothing to rewrite or run, but the wait's outcome still counts (too late).
                if case .success = result { settled(false) } else { settled(nil) }
                return
            }
            switch result {
            case .success(let token):
                // Too late when the exchange has ended or was answered meanwhile (its token wait timed out): then
                // its head is not rewritten, and the machine ignores the stale ticket.
                let inTime = self.connection.exchange?.awaits(ticket) == true
                // Only a request the codec read (`received`) is routed upstream.
                if inTime, let client = exchange.received {
                    exchange.prepare(
                        client: client, token: token, clientAddress: self.clientAddress, webSocket: webSocket,
                        into: &self.requestHeads)
                }
                settled(inTime)
                self.run(self.connection.exchangeEvent { $0.tokenArrived(ticket) })
            case .failure(let error):
                settled(nil)
                self.run(self.connection.exchangeEvent { $0.tokenFailed(ticket, error) })
            }
        }
    }

    /// The request to one of the proxy's own endpoints has ended: answer it, now or when the answer is known.
    func answerLocally(_ ticket: ExchangeStateMachine.Ticket) {
        guard let exchange, let proxy = exchange.proxy else { return localAnswer(ticket, .problem(.starting)) }
        let target = exchange.target
        let body = exchange.localBody ?? LocalBody()
        let request = LocalRequest(
            head: exchange.received?.headWithFields ?? exchange.request.head(), path: target?.path ?? "/-",
            query: target?.query,
            bodyLength: body.length,
            bodySHA256: body.sha256Hex)
        switch proxy.admin.response(to: request) {
        case .now(let response):
            localAnswer(ticket, .response(response))
        case .refused(let error):
            localAnswer(ticket, .problem(error))
        case .later(let answer):
            // Reads stay possible (the request has ended); the answer is written when it is known, unless the
            // client has gone by then.
            context.eventLoop.makeFutureWithTask { await answer() }
                .assumeIsolated()
                .whenSuccess { [weak self] response in
                    guard let self, !self.removed else { return }
                    self.localAnswer(ticket, .response(response))
                }
        }
    }

    private func localAnswer(_ ticket: ExchangeStateMachine.Ticket, _ answer: ExchangeStateMachine.Answer) {
        run(connection.exchangeEvent { $0.localAnswer(ticket, answer) })
    }

    /// What the route itself refuses about `request`, before its token is used: a required header missing, a field
    /// name imitating one the route decides, a method it does not allow (or asks for by override), or what a
    /// discovered route's gate answers.
    static func routeRefusal(
        _ request: ClientRequest, binding: RouteBinding, target: RequestTarget, remainder: Substring
    ) -> ProxyError? {
        if let missing = binding.requiredHeaders.first(where: { !$0.isSatisfied(by: request) }) {
            return .requiredHeaderMissing(name: missing.name)
        }
        if !binding.route.headers.set.isEmpty || !binding.route.headers.remove.isEmpty,
            let imitated = RequestGuard.imitatedName(in: request, decidedBy: binding.route.headers)
        {
            // The route sets or removes that field: an `_` spelling would reach a backend that folds it into `-`.
            return .badRequest(detail: "A header name is refused: it imitates \(imitated), which this route decides.")
        }
        if let methods = binding.route.methods {
            let method = request.line.method.rawValue
            if !methods.contains(method) {
                return .methodNotAllowed(method: method, allowed: methods.sorted())
            }
            if let overridden = MethodOverride.forbidden(request: request, query: target.query, allowed: methods) {
                return .methodNotAllowed(method: overridden, allowed: methods.sorted())
            }
        }
        if binding.isDiscovered, binding.discoveredTokens == nil || DiscoveredRouteGate.isOAuthMetadata(remainder) {
            return DiscoveredRouteGate.refusal(
                prefix: binding.route.prefix, remainder: remainder, usesAccount: binding.usesAccount)
        }
        return nil
    }

    /// A client-supplied `X-Request-Id` is kept when it is short and printable, so it can be logged safely.
    static func clientRequestID(_ request: ClientRequest) -> String? {
        // The first X-Request-Id, as the codec noted it.
        guard let range = request.parsed.requestID else { return nil }
        let value = request.string(range)
        guard (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return value
    }
}
