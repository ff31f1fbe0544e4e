import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// A fake whose answers are ``FakeHTTPEndpoints``: HTTP/1.1 with pipelining (and TLS when given a context) on
/// 127.0.0.1 with a port the OS chooses, keeping its open connections so that ``shutdown()`` closes them, hanging or
/// held ones included.
final class FakeEndpointServer: Sendable {
    private let server: FakeHTTPServer
    private let connections: Connections

    /// The port it listens on (127.0.0.1).
    var port: Int { server.port }

    private init(server: FakeHTTPServer, connections: Connections) {
        self.server = server
        self.connections = connections
    }

    static func start(_ endpoints: some FakeHTTPEndpoints, tls: NIOSSLContext? = nil) async throws
        -> FakeEndpointServer
    {
        let connections = Connections()
        let server = try await FakeHTTPServer.start(opened: connections.opened, closed: connections.closed) {
            channel, _ in
            if let tls {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
            }
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: true, withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(FakeHTTPHandler(endpoints: endpoints))
        }
        return FakeEndpointServer(server: server, connections: connections)
    }

    /// Stops listening and closes every connection. Idempotent.
    func shutdown() async {
        await server.shutdown(closing: connections.shutDown())
    }

    /// The connections open now; none is accepted once shutdown has begun.
    private final class Connections: Sendable {
        private let open = Mutex<(next: Int, channels: [Int: any Channel], closed: Bool)>((0, [:], false))

        func opened(_ channel: any Channel) -> Int? {
            open.withLock { open in
                guard !open.closed else { return nil }
                open.next += 1
                open.channels[open.next] = channel
                return open.next
            }
        }

        func closed(_ id: Int) { open.withLock { _ = $0.channels.removeValue(forKey: id) } }

        func shutDown() -> [any Channel] {
            open.withLock { open in
                open.closed = true
                return Array(open.channels.values)
            }
        }
    }
}

/// Endpoints that answer every request at once, and a body too large as OAuth's `invalid_request`.
protocol ImmediateFakeEndpoints: FakeHTTPEndpoints where Response == FakeIdentityResponse {
    func reply(to request: FakeHTTPRequest) -> FakeIdentityResponse
}

extension ImmediateFakeEndpoints {
    var bodyTooLarge: FakeIdentityResponse { .json(status: 413, ["error": "invalid_request"]) }

    func answer(_ request: FakeHTTPRequest, respond: @escaping @Sendable (FakeIdentityResponse) -> Void) {
        respond(reply(to: request))
    }
}
