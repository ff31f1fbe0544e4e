import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The loopback redirect URI of a native app (RFC 8252 §7.3): a small HTTP server on 127.0.0.1 that waits for the
/// browser to come back with the authorization response, answers it with a page the person can close, and hands
/// the response to the sign-in. It never listens on another interface.
final class LoopbackRedirectListener: Sendable {
    /// Why no authorization response arrived.
    package enum Failure: Error, Equatable {
        case timedOut
        case cancelled
    }

    let port: Int
    private let channels: [any Channel]
    private let outcome: Outcome

    private init(port: Int, channels: [any Channel], outcome: Outcome) {
        self.port = port
        self.channels = channels
        self.outcome = outcome
    }

    /// Listens on 127.0.0.1:`port` (0: any free port). `page` turns the authorization response into the HTML
    /// answered to the browser.
    /// - Parameters:
    ///   - alsoIPv6: listen on `[::1]` too (same port, best effort), for a redirect URI naming `localhost`.
    ///   - accepts: whether an authorization response ends the wait; one it refuses gets its page and the wait
    ///     goes on (a stale tab of an earlier sign-in).
    package static func start(
        port: Int, group: any EventLoopGroup, timeout: Duration, alsoIPv6: Bool = false,
        accepts: @escaping @Sendable (AuthorizationCallback) -> Bool = { _ in true },
        page: @escaping @Sendable (AuthorizationCallback) -> String
    ) async throws -> LoopbackRedirectListener {
        let loop = group.any()
        let outcome = Outcome(promise: loop.makePromise())
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        RedirectHandler(outcome: outcome, accepts: accepts, page: page))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: "127.0.0.1", port: port).get()
        } catch {
            outcome.finish(.failure(error))  // a promise must be completed, even one nobody waits on
            throw error
        }
        let boundPort = channel.localAddress?.port ?? port
        var channels = [channel]
        if alsoIPv6, let second = try? await bootstrap.bind(host: "::1", port: boundPort).get() {
            channels.append(second)
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        loop.scheduleTask(in: .nanoseconds(nanoseconds)) { outcome.finish(.failure(Failure.timedOut)) }
        return LoopbackRedirectListener(port: boundPort, channels: channels, outcome: outcome)
    }

    /// The addresses it listens on: loopback ones only (RFC 8252 §8.3: a redirect listener on another interface
    /// would take an authorization code from any machine that can reach it).
    var listeningAddresses: [SocketAddress] { channels.compactMap(\.localAddress) }

    /// `http://127.0.0.1:PORT/`, for `redirect_uri`.
    var redirectURI: String { "http://127.0.0.1:\(port)/" }

    /// Waits for the authorization response, then stops listening, whatever the outcome. A timeout is
    /// ``SignInFailure/Kind/timedOut`` with `timeoutMessage`; a cancelled task (Ctrl-C) stops waiting at once and is
    /// ``SignInFailure/cancelled``.
    func callback(timeoutMessage: String) async throws(SignInFailure) -> AuthorizationCallback {
        let result: Result<AuthorizationCallback, any Error>
        do {
            result = .success(
                try await withTaskCancellationHandler {
                    try await outcome.promise.futureResult.get()
                } onCancel: {
                    outcome.finish(.failure(Failure.cancelled))
                })
        } catch {
            result = .failure(error)
        }
        await close()
        switch result {
        case .success(let callback): return callback
        case .failure(let error as Failure) where error == .timedOut: throw SignInFailure(.timedOut, timeoutMessage)
        case .failure: throw .cancelled
        }
    }

    /// Stops listening.
    func close() async {
        outcome.finish(.failure(Failure.cancelled))
        for channel in channels { try? await channel.close() }
    }

    /// The one result of the wait, set once by whichever comes first: the browser, the timeout, a cancellation.
    package final class Outcome: Sendable {
        let promise: EventLoopPromise<AuthorizationCallback>
        private let finished = Atomic<Bool>(false)

        package init(promise: EventLoopPromise<AuthorizationCallback>) {
            self.promise = promise
        }

        package func finish(_ result: Result<AuthorizationCallback, any Error>) {
            guard finished.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
            else { return }
            promise.completeWith(result)
        }
    }
}

/// Answers each request on the loopback listener; the first that carries an authorization response ends the wait.
private final class RedirectHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let outcome: LoopbackRedirectListener.Outcome
    private let accepts: @Sendable (AuthorizationCallback) -> Bool
    private let page: @Sendable (AuthorizationCallback) -> String
    private var target: String?

    init(
        outcome: LoopbackRedirectListener.Outcome, accepts: @escaping @Sendable (AuthorizationCallback) -> Bool,
        page: @escaping @Sendable (AuthorizationCallback) -> String
    ) {
        self.outcome = outcome
        self.accepts = accepts
        self.page = page
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            target = head.uri
        case .body:
            break
        case .end:
            let callback = AuthorizationCallback(target: target ?? "/")
            if callback.isAnswer {
                respond(context, status: .ok, html: page(callback))
                if accepts(callback) { outcome.finish(.success(callback)) }
            } else {
                respond(context, status: .notFound, html: "<!doctype html><title>Not found</title>")
            }
        }
    }

    private func respond(_ context: ChannelHandlerContext, status: HTTPResponseStatus, html: String) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/html; charset=utf-8")
        headers.add(name: "content-length", value: String(html.utf8.count))
        headers.add(name: "cache-control", value: "no-store")
        headers.add(name: "connection", value: "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: html)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
