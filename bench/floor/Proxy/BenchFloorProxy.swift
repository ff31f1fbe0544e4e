import ArgumentParser
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pass-through reverse proxy that does nothing but bearer-proxy's job in the benchmark: forward each request to
/// one upstream over a kept-alive connection per client connection, with the route prefix stripped, `Host` set to
/// the upstream and `Authorization: Bearer <BENCH_TOKEN>` put in, and stream the response back (issue #15 items
/// 3–4). `--codec nio` runs it on NIOHTTP1's codecs — the floor of the product's design; `--codec strict` on
/// `BearerCodec` (#24's strict codec, the data plane's to be) with bytes passed through — the prototype of the next one.
/// `--http2 channels|connection` serves HTTP/2 clients instead (``H2Floor``): what NIOHTTP2 alone costs a proxy.
@main
struct BenchFloorProxy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-floor-proxy",
        abstract:
            "The benchmark's floors (NIOHTTP1 codecs; NIOHTTP2) and prototype (strict byte parser) reverse proxies.")

    enum Codec: String, ExpressibleByArgument, CaseIterable {
        case nio, strict
    }

    @Option(help: "nio: NIOHTTP1's decoders and encoders on both sides; strict: BearerCodec on bytes.")
    var codec: Codec = .nio

    @Option(
        help: """
            Clients speak HTTP/2 (prior knowledge) instead: channels, a child channel a stream (NIOHTTP2's \
            multiplexer); connection, every stream on the connection's own handler. --codec is then unused.
            """)
    var http2: H2Floor.Mode?

    @Option(help: "host:port to listen on.")
    var listen = "127.0.0.1:18088"

    @Option(help: "host:port of the upstream (plain HTTP/1.1).")
    var upstream = "127.0.0.1:18081"

    @Option(help: "Event loops.")
    var threads = 1

    @Option(help: "Route prefix stripped from each request's target.")
    var stripPrefix = "/bench"

    func validate() throws {
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        _ = try HostPort(listen)
        _ = try HostPort(upstream)
        guard ProcessEnvironment.token != nil else { throw ValidationError("set BENCH_TOKEN to the bearer token") }
    }

    func run() throws {
        let listenAddress = try HostPort(listen)
        let upstreamAddress = try HostPort(upstream)
        let configuration = ProxyConfiguration(
            upstream: upstreamAddress, stripPrefix: stripPrefix,
            authorization: "Bearer " + (ProcessEnvironment.token ?? ""))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let channel = try FloorServer.bind(
            codec: codec, http2: http2, host: listenAddress.host, port: listenAddress.port,
            configuration: configuration,
            group: group
        ).wait()
        let shape = http2.map { "http2 \($0.rawValue)" } ?? codec.rawValue
        print("bench-floor-proxy (\(shape)) listening on \(listen), upstream \(upstream)")
        try channel.closeFuture.wait()
        try group.syncShutdownGracefully()
    }
}

/// `host:port`, as the options take it.
struct HostPort: Sendable {
    var host: String
    var port: Int

    init(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port), colon > text.startIndex
        else { throw ValidationError("expected host:port, got \(text)") }
        self.host = String(text[..<colon])
        self.port = port
    }

    /// The `Host` field the upstream gets.
    var authority: String { "\(host):\(port)" }
}

/// What every connection of the proxy shares.
struct ProxyConfiguration: Sendable {
    var upstream: HostPort
    var stripPrefix: String
    /// The whole `Authorization` value, `Bearer <token>`.
    var authorization: String
}

/// The token, from the environment so that it is not on the command line (`ps`).
enum ProcessEnvironment {
    static var token: String? {
        guard let value = getenv("BENCH_TOKEN") else { return nil }
        let token = String(cString: value)
        return token.isEmpty ? nil : token
    }
}

extension H2Floor.Mode: ExpressibleByArgument {}
