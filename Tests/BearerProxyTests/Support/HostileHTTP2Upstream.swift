import NIOCore
import NIOHPACK
import NIOPosix
import Synchronization

/// An HTTP/2 upstream that misbehaves on purpose, on 127.0.0.1 (port chosen by the OS): a raw TCP server that reads
/// the proxy's frames itself (the 9-byte frame header of RFC 9113 §4.1; header blocks by NIOHPACK's decoder) and
/// writes frames built by hand, so that it can send what no HTTP/2 stack would. A request whose path ends in
/// `/attack` gets the test's attack bytes — at once, or held until a number of `/attack` requests have come on its
/// connection, so that an attack can hit many streams open together; any other gets `200` with the body `fine`. It
/// records, per connection, the frames the proxy sent and whether the connection closed, and every request; tests
/// wait on those events.
final class HostileHTTP2Upstream: Sendable {
    /// Frame types and flags (RFC 9113 §6).
    enum Kind {
        static let data: UInt8 = 0, headers: UInt8 = 1, rstStream: UInt8 = 3, settings: UInt8 = 4
        static let pushPromise: UInt8 = 5, ping: UInt8 = 6, goAway: UInt8 = 7, windowUpdate: UInt8 = 8
        static let continuation: UInt8 = 9
        static let endStream: UInt8 = 0x1, ack: UInt8 = 0x1, endHeaders: UInt8 = 0x4
    }

    /// A frame from the proxy.
    struct Frame: Sendable {
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: [UInt8]
    }

    /// A request from the proxy: the connection it came on (1, 2, … in accept order), its stream, its path.
    struct Request: Sendable {
        var connection: Int
        var stream: UInt32
        var path: String
    }

    /// One connection as the upstream saw it.
    struct Connection: Sendable {
        var frames: [Frame] = []
        var closed = false
        /// Request body bytes (DATA payloads) the proxy sent.
        var bodyBytes = 0
        /// The error code of the proxy's GOAWAY, if it sent one (RFC 9113 §6.8).
        var goAway: UInt32? {
            frames.first { $0.type == Kind.goAway && $0.payload.count >= 8 }.map { Self.word($0.payload, at: 4) }
        }
        /// PINGs the proxy sent (not its ACKs).
        var pings: Int { frames.filter { $0.type == Kind.ping && $0.flags & Kind.ack == 0 }.count }

        static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
    }

    struct Observed: Sendable {
        var connections: [Connection] = []
        var requests: [Request] = []
    }

    /// What the upstream writes for an `/attack` request on `stream`: whole frames, built by the test.
    typealias Attack = @Sendable (_ stream: UInt32) -> [UInt8]

    private let channel: any Channel
    private let state: WatchedState<Observed>
    private let answersPings = Atomic<Bool>(true)

    var port: Int { channel.localAddress?.port ?? 0 }
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var observed: Observed { state.read { $0 } }
    var requests: [Request] { state.read { $0.requests } }
    var connections: [Connection] { state.read { $0.connections } }

    /// Whether it acknowledges the proxy's PINGs (RFC 9113 §6.7); an upstream gone silent does not.
    var acknowledgesPings: Bool {
        get { answersPings.load(ordering: .relaxed) }
        set { answersPings.store(newValue, ordering: .relaxed) }
    }

    private init(channel: any Channel, state: WatchedState<Observed>) {
        self.channel = channel
        self.state = state
    }

    /// Starts it. `settings` are the parameters of its SETTINGS frame (RFC 9113 §6.5.2), sent first on each
    /// connection; it acknowledges the proxy's SETTINGS, so the proxy's own limits hold (RFC 9113 §6.5.3). The
    /// attack's bytes for `/attack` requests are written when `gathering` of them have come on the connection, all
    /// together.
    static func start(
        settings: [(UInt16, UInt32)] = [], gathering: Int = 1, attack: @escaping Attack = { _ in [] }
    ) async throws -> HostileHTTP2Upstream {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let state = WatchedState(Observed(), timerLoop: loop) { observed in
            "\(observed.connections.count) connections, \(observed.requests.count) requests, closed "
                + "\(observed.connections.map(\.closed)), GOAWAY \(observed.connections.map(\.goAway))"
        }
        let box = Mutex<HostileHTTP2Upstream?>(nil)
        let settingsFrame = frame(
            Kind.settings, stream: 0,
            settings.flatMap { id, value in
                [UInt8(id >> 8), UInt8(id & 0xff)] + withUnsafeBytes(of: value.bigEndian) { Array($0) }
            })
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let upstream = box.withLock({ $0 }), state.connectionOpened(channel) != nil else {
                        throw ChannelError.ioOnClosedChannel
                    }
                    let index = state.mutate { observed in
                        observed.connections.append(Connection())
                        return observed.connections.count
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        Handler(
                            upstream: upstream, connection: index, settings: settingsFrame, gathering: gathering,
                            attack: attack))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let upstream = HostileHTTP2Upstream(channel: channel, state: state)
        box.withLock { $0 = upstream }
        return upstream
    }

    /// Waits until `isMet` holds for what it has seen.
    func wait(
        for what: String, timeout: Duration = .seconds(15), until isMet: @escaping @Sendable (Observed) -> Bool
    ) async throws {
        try await state.wait(for: what, timeout: timeout, until: isMet)
    }

    /// Waits until connection `index` (1, 2, …) has closed.
    func waitClosed(_ index: Int, timeout: Duration = .seconds(15)) async throws {
        try await wait(for: "connection \(index) closed", timeout: timeout) {
            $0.connections.count >= index && $0.connections[index - 1].closed
        }
    }

    func shutdown() async throws {
        for channel in state.shutDown() { try? await channel.close() }
        try await channel.close()
    }

    fileprivate func record(_ connection: Int, _ change: (inout Connection) -> Void) {
        state.mutate { change(&$0.connections[connection - 1]) }
    }

    fileprivate func record(_ request: Request) {
        state.mutate { $0.requests.append(request) }
    }

    fileprivate func closed(_ connection: Int) {
        state.mutate { $0.connections[connection - 1].closed = true }
    }

    // MARK: Frames built by hand

    /// A frame (RFC 9113 §4.1): 24-bit length, type, flags, 31-bit stream identifier, payload.
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags]
            + withUnsafeBytes(of: (stream & 0x7fff_ffff).bigEndian) { Array($0) } + payload
    }

    /// An HPACK integer (RFC 7541 §5.1) with a `prefix`-bit prefix, the first byte's other bits `first`.
    static func integer(_ value: Int, prefix: Int, first: UInt8) -> [UInt8] {
        let limit = (1 << prefix) - 1
        if value < limit { return [first | UInt8(value)] }
        var bytes = [first | UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        bytes.append(UInt8(rest))
        return bytes
    }

    /// An HPACK string literal, not Huffman-coded (RFC 7541 §5.2).
    static func string(_ text: String) -> [UInt8] {
        integer(text.utf8.count, prefix: 7, first: 0) + Array(text.utf8)
    }

    /// A field line with a literal name (RFC 7541 §6.2): added to the decoder's dynamic table when `indexed`.
    static func literal(_ name: String, _ value: String, indexed: Bool = false) -> [UInt8] {
        [indexed ? 0x40 : 0x00] + string(name) + string(value)
    }

    /// `:status: 200` from the static table (RFC 7541 Appendix A, index 8).
    static let status200: [UInt8] = [0x88]

    /// `200` with the body `fine` on `stream`.
    static func fine(stream: UInt32) -> [UInt8] {
        frame(Kind.headers, flags: Kind.endHeaders, stream: stream, status200)
            + frame(Kind.data, flags: Kind.endStream, stream: stream, Array("fine".utf8))
    }

    // MARK: The connection

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let upstream: HostileHTTP2Upstream
        let connection: Int
        let settings: [UInt8]
        let gathering: Int
        let attack: Attack
        /// The attack's bytes for the `/attack` requests held so far, and how many.
        var held: [UInt8] = []
        var heldRequests = 0
        var buffer = ByteBuffer()
        var prefaceRead = false
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())

        init(
            upstream: HostileHTTP2Upstream, connection: Int, settings: [UInt8], gathering: Int,
            attack: @escaping Attack
        ) {
            self.upstream = upstream
            self.connection = connection
            self.settings = settings
            self.gathering = gathering
            self.attack = attack
        }

        func channelActive(context: ChannelHandlerContext) {
            write(settings, context: context)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            upstream.closed(connection)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            buffer.writeBuffer(&bytes)
            if !prefaceRead {
                guard buffer.readableBytes >= 24 else { return }
                buffer.moveReaderIndex(forwardBy: 24)
                prefaceRead = true
            }
            while let header = buffer.getBytes(at: buffer.readerIndex, length: 9) {
                let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
                guard buffer.readableBytes >= 9 + length else { break }
                buffer.moveReaderIndex(forwardBy: 9)
                let payload = buffer.readBytes(length: length) ?? []
                let frame = Frame(
                    type: header[3], flags: header[4], stream: Connection.word(header, at: 5) & 0x7fff_ffff,
                    payload: payload)
                received(frame, context: context)
                // Recorded once answered: a test that sees a PING sees its ACK sent.
                upstream.record(connection) { $0.frames.append(frame) }
            }
        }

        private func received(_ frame: Frame, context: ChannelHandlerContext) {
            switch frame.type {
            case Kind.settings where frame.flags & Kind.ack == 0:
                write(HostileHTTP2Upstream.frame(Kind.settings, flags: Kind.ack, stream: 0), context: context)
            case Kind.ping where frame.flags & Kind.ack == 0:
                guard upstream.acknowledgesPings else { return }
                write(
                    HostileHTTP2Upstream.frame(Kind.ping, flags: Kind.ack, stream: 0, frame.payload), context: context)
            case Kind.data:
                upstream.record(connection) { $0.bodyBytes += frame.payload.count }
            case Kind.headers where frame.flags & Kind.endHeaders != 0:
                var block = ByteBuffer(bytes: frame.payload)
                let path = (try? decoder.decodeHeaders(from: &block))?.first(name: ":path") ?? ""
                upstream.record(Request(connection: connection, stream: frame.stream, path: path))
                guard path.hasSuffix("/attack") else {
                    return write(HostileHTTP2Upstream.fine(stream: frame.stream), context: context)
                }
                held += attack(frame.stream)
                heldRequests += 1
                guard heldRequests >= gathering else { return }
                write(held, context: context)
                held = []
                heldRequests = 0
            default:
                break
            }
        }

        private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
            guard !bytes.isEmpty else { return }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
        }
    }
}
