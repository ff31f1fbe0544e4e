import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// #26 item 2: a Unix-domain socket listener, 0600 in a directory only its owner can change, beside TCP listeners;
/// a stale socket file is replaced, a live one or a file that is not a socket is not; the file goes at shutdown; the
/// peer's uid comes from the kernel (`SO_PEERCRED`) and meets the same rule as on loopback TCP. The cross-user attack
/// with real accounts (root connecting through the socket) is in `.ci/cross-user`.
@Suite("Only its owner: the Unix-socket listener")
struct UnixSocketListenerTests {
    /// A fresh directory of this user's (mode 0755: not writable by others), short enough for `sun_path`.
    static func directory() throws -> String {
        let path = "/tmp/bp-unix-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        return path
    }

    static func mode(_ path: String) throws -> Int {
        var status = stat()
        try #require(lstat(path, &status) == 0, "lstat \(path): errno \(errno)")
        return Int(status.st_mode & 0o7777)
    }

    /// Whether anything is at `path` (FileManager's `fileExists` says no for a socket file).
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// A proxy with the route `/api` → `upstream`, listening on `listeners`.
    static func withProxy(
        listeners: [Listener], upstream: FakeUpstream, lookup: PeerUserPolicy.Lookup = .kernel,
        logger: Logger = ProxyHarness.silentLogger, _ body: (RunningProxy) async throws -> Void
    ) async throws {
        let configuration = try TestConfigurations.make(
            routes: #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#)
        let proxy = try await RunningProxy.start(
            configuration: configuration, listeners: listeners, stateDirectory: nil, threads: 2, logger: logger,
            peerLookup: lookup)
        do {
            try await body(proxy)
            try await proxy.shutdownWithinLimit()
        } catch {
            try? await proxy.shutdownWithinLimit()
            throw error
        }
    }

    static func send(_ path: String, uri: String) async throws -> TestResponse {
        let connection = try await TestConnection.open(unixSocket: path)
        do {
            let response = try await connection.send(method: "GET", uri: uri)
            await connection.close()
            return response
        } catch {
            await connection.close()
            throw error
        }
    }

    @Test("a request through the socket gets the route's token; TCP serves beside it; the file goes at shutdown")
    func servesThroughTheSocket() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/run/proxy.sock")
        try await withUpstream({ _ in .echo }) { upstream in
            try await Self.withProxy(
                listeners: [.tcp(ListenAddress(host: "127.0.0.1", port: 0)), .unix(socket)], upstream: upstream
            ) { proxy in
                #expect(try Self.mode(base + "/run") == 0o700, "the socket's directory is not 0700")
                #expect(try Self.mode(socket.path) == 0o600, "the socket file is not 0600")
                let response = try await Self.send(socket.path, uri: "/api/x")
                #expect(response.status == .ok)
                let claims = try jwtClaims(upstream.requests.last?.head.headers["authorization"].first)
                #expect(claims["aud"] as? String == "api://a")
                let tcp = try await TestClient.send(port: proxy.server.port, uri: "/api/y")
                #expect(tcp.status == .ok)
                #expect(upstream.requests.count == 2)
                #expect(proxy.server.listeners.contains(.unix(socket)))
            }
        }
        #expect(!Self.exists(socket.path), "the socket file outlived the proxy")
    }

    @Test("HTTP/2 through the socket: curl --unix-socket --http2-prior-knowledge gets the route's token")
    func http2ThroughTheSocket() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/proxy.sock")
        try await withUpstream({ _ in .echo }) { upstream in
            try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream) { _ in
                let curl = try await ChildProcess.run(
                    "/usr/bin/curl",
                    [
                        "-s", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", "--http2-prior-knowledge",
                        "--unix-socket", socket.path, "http://localhost/api/h2",
                    ])
                #expect(curl.stdout == "2 200", "curl: \(curl.stdout) \(curl.stderr)")
                let claims = try jwtClaims(upstream.requests.last?.head.headers["authorization"].first)
                #expect(claims["aud"] as? String == "api://a")
            }
        }
    }

    @Test("/-/status lists every listener")
    func statusListsTheListeners() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/proxy.sock")
        try await withUpstream({ _ in .echo }) { upstream in
            try await Self.withProxy(
                listeners: [.unix(socket), .tcp(ListenAddress(host: "127.0.0.1", port: 0))], upstream: upstream
            ) { proxy in
                let response = try await Self.send(socket.path, uri: "/-/status")
                let access = try #require(try response.jsonObject()["access"] as? [String: Any])
                #expect(
                    access["listeners"] as? [String] == ["unix:\(socket.path)", "127.0.0.1:\(proxy.server.port)"])
            }
        }
    }

    @Test("a client key that a remote listener requires is required on the socket too: no way around it")
    func keyRequiredOnEveryListener() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/proxy.sock")
        try await withUpstream({ _ in .echo }) { upstream in
            let configuration = try TestConfigurations.make(
                routes: #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#)
            let proxy = try await RunningProxy.start(
                configuration: configuration,
                listeners: [.unix(socket), .tcp(ListenAddress(host: "0.0.0.0", port: 0))], stateDirectory: nil,
                environment: ["BEARER_PROXY_KEY": "a-long-enough-client-key-0123456789"], threads: 1,
                logger: ProxyHarness.silentLogger)
            do {
                let refused = try await Self.send(socket.path, uri: "/api/x")
                #expect(refused.status == .unauthorized)
                #expect(upstream.requests.isEmpty)
                try await proxy.shutdownWithinLimit()
            } catch {
                try? await proxy.shutdownWithinLimit()
                throw error
            }
        }
    }

    @Test("another user's connection through the socket is closed: no answer, no token, no upstream request")
    func otherUserRefused() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/proxy.sock")
        for lookup in [PeerUserPolicy.Lookup.fixed(UInt32(geteuid()) &+ 1), .failing] {
            try await withUpstream({ _ in .echo }) { upstream in
                try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream, lookup: lookup) { proxy in
                    await #expect(throws: (any Error).self, "\(lookup): answered") {
                        try await Self.send(socket.path, uri: "/api/x")
                    }
                    #expect(upstream.requests.isEmpty)
                    #expect(proxy.tokens.allTokens.isEmpty)
                }
            }
        }
    }

    @Test("SO_PEERCRED names the connecting process's user")
    func kernelNamesThePeer() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let path = base + "/peer.sock"
        let seen = MultiThreadedEventLoopGroup.singleton.next()
            .makePromise(of: Result<UInt32, PeerCredentials.Failure>.self)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                PeerCredentials.uid(of: channel).map { seen.succeed($0) }
            }
            .bind(unixDomainSocketPath: path).get()
        defer { server.close(promise: nil) }
        let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: path).get()
        defer { client.close(promise: nil) }
        let peer = try await withTimeout(waitingFor: "the peer's credentials") { try await seen.futureResult.get() }
        #expect(try peer.get() == UInt32(geteuid()))
        // The policy applied to it: the owner is let in, anyone else is not.
        let me = UInt32(geteuid())
        #expect(PeerUserPolicy(owner: me).decide(unixPeer: .success(me)) == .admitted(uid: me))
        #expect(PeerUserPolicy(owner: me &+ 1).decide(unixPeer: .success(me)) == .refused(uid: me))
        #expect(PeerUserPolicy(owner: me &+ 1, allowUsers: [me]).decide(unixPeer: .success(me)) == .admitted(uid: me))
        #expect(
            PeerUserPolicy(owner: me).decide(unixPeer: .failure(PeerCredentials.Failure(description: "x")))
                == .unknown(reason: "x"))
    }

    @Test("a stale socket file of this user's is replaced; a live one, or a file that is not a socket, is not")
    func staleSocketReplaced() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/proxy.sock")
        // Stale: bound, listened on, then closed without removing the file (a proxy that was killed; NIO's own
        // close removes the file, so this is done with the system calls).
        let stale = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(stale >= 0)
        let bound = try SocketAddress(unixDomainSocketPath: socket.path).withSockAddr { bind(stale, $0, socklen_t($1)) }
        try #require(bound == 0 && listen(stale, 1) == 0)
        _ = Glibc.close(stale)
        #expect(Self.exists(socket.path))
        try await withUpstream({ _ in .echo }) { upstream in
            try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream) { _ in
                let response = try await Self.send(socket.path, uri: "/-/health")
                #expect(response.status == .ok)
                // Live: a second proxy on the same path must not take it over.
                await #expect {
                    try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream) { _ in }
                } throws: { error in
                    "\(error)".contains("is in use")
                }
                let again = try await Self.send(socket.path, uri: "/-/health")
                #expect(again.status == .ok, "the first proxy lost its socket")
            }
        }
        // Not a socket: left alone.
        let file = base + "/proxy.sock"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: file))
        _ = try await withUpstream({ _ in .echo }) { upstream in
            await #expect {
                try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream) { _ in }
            } throws: { error in
                "\(error)".contains("is not a socket")
            }
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep me")
    }

    /// A listening socket bound at `path` with system calls, and its file's inode.
    static func bindSocket(at path: String) throws -> (descriptor: Int32, inode: UInt64) {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        let bound = try SocketAddress(unixDomainSocketPath: path).withSockAddr { bind(descriptor, $0, socklen_t($1)) }
        try #require(bound == 0 && listen(descriptor, 1) == 0, "bind \(path): errno \(errno)")
        var status = stat()
        try #require(lstat(path, &status) == 0)
        return (descriptor, UInt64(status.st_ino))
    }

    @Test("at shutdown the proxy removes its own socket file, never one put in its place while it ran")
    func replacedSocketKept() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/proxy.sock")
        var replacement: (descriptor: Int32, inode: UInt64)?
        defer { if let replacement { _ = Glibc.close(replacement.descriptor) } }
        try await withUpstream({ _ in .echo }) { upstream in
            try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream) { _ in
                #expect(try await Self.send(socket.path, uri: "/-/health").status == .ok)
                // Another program takes the path over: the proxy's file is unlinked and a new socket bound there.
                try #require(unlink(socket.path) == 0)
                replacement = try Self.bindSocket(at: socket.path)
            }
        }
        var status = stat()
        #expect(lstat(socket.path, &status) == 0, "the proxy removed a socket file that was not its own")
        #expect(UInt64(status.st_ino) == replacement?.inode)
    }

    @Test(
        "a leftover socket of another user's is not replaced, even when nothing answers on it",
        .enabled(if: geteuid() == 0, "needs root: only root can make a socket file of another user's"))
    func otherUsersSocketKept() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = try UnixSocketPath(base + "/proxy.sock")
        let stale = try Self.bindSocket(at: socket.path)
        _ = Glibc.close(stale.descriptor)
        try #require(chown(socket.path, 65534, 65534) == 0)
        _ = try await withUpstream({ _ in .echo }) { upstream in
            await #expect {
                try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream) { _ in }
            } throws: { error in
                "\(error)".contains("is a socket of uid 65534, not this proxy's user; not replacing it")
            }
        }
        var status = stat()
        #expect(lstat(socket.path, &status) == 0 && UInt64(status.st_ino) == stale.inode, "the socket was replaced")
    }

    @Test("a directory others can write to, or another user's, is refused before anything listens")
    func unsafeDirectoryRefused() async throws {
        let base = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let shared = base + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        #expect(chmod(shared, 0o777) == 0)
        let socket = try UnixSocketPath(shared + "/proxy.sock")
        _ = try await withUpstream({ _ in .echo }) { upstream in
            await #expect {
                try await Self.withProxy(listeners: [.unix(socket)], upstream: upstream) { _ in }
            } throws: { error in
                "\(error)".contains("is writable by other users")
            }
        }
        #expect(!Self.exists(socket.path))
        // Another user's directory (as this test cannot make one, the proxy is told it runs as someone else).
        let own = try UnixSocketPath(base + "/proxy.sock")
        #expect {
            try UnixSocketFile.prepare(own, owner: geteuid() &+ 1)
        } throws: { error in
            "\(error)".contains("belongs to uid \(geteuid())")
        }
    }

    @Test("listen takes a string or an array; unix: paths resolve, and each problem is reported at its path")
    func configuration() throws {
        typealias F = ConfigurationFixture
        let both = try Configuration.parse(
            Data(F.document(#""listen": ["127.0.0.1:9000", "unix:", "unix:sockets/p.sock"]"#).utf8),
            environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], baseDirectory: "/etc/bp")
        #expect(
            both.listeners == [
                .tcp(ListenAddress(host: "127.0.0.1", port: 9000)),
                .unix(try UnixSocketPath("/run/user/1000/bearer-proxy/proxy.sock")),
                .unix(try UnixSocketPath("/etc/bp/sockets/p.sock")),
            ])
        let long = "unix:/" + String(repeating: "a", count: 120)
        let problems = F.problems(
            F.document(#""listen": ["unix:", "nope", "\#(long)", "unix:/x/", "127.0.0.1:1", "127.0.0.1:1"]"#),
            environment: [:])
        #expect(
            problems.map(\.path) == ["listen[0]", "listen[1]", "listen[2]", "listen[3]", "listen[5]"])
        #expect(problems[0].message.contains("XDG_RUNTIME_DIR is not set"))
        #expect(problems[2].message.contains("at most 107 bytes"))
        #expect(problems[4].message.contains("listed twice"))
        #expect(F.problems(F.document(#""listen": []"#)).map(\.description) == ["listen: must not be empty"])
        #expect(F.problems(F.document(#""listen": 8080"#)).first?.message.contains("or an array of them") == true)
    }
}
