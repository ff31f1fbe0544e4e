import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import BearerDataPlane
@testable import BearerTelemetry

/// What a stream holds while its exchange does not want its request's frames: bounded by the stream's window, however
/// the client cuts its DATA, and nothing the exchange does not read.
@Suite("HTTP/2 clients: frames held for an exchange")
struct HTTP2HeldFramesTests {
    static func data(_ bytes: ByteBuffer, endStream: Bool = false, padding: Int? = nil) -> HTTP2Frame.FramePayload {
        var data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(bytes), endStream: endStream)
        data.paddingBytes = padding
        return .data(data)
    }

    @Test("a window's worth of one-byte DATA frames is held in one buffer, not frame by frame, nor their read buffers")
    func oneByteFrames() {
        var held = HTTP2HeldFrames()
        var expected = ByteBuffer()
        var flowControlled = 0
        for n in 0..<65_535 {
            // Each byte a slice of a read buffer of its own, as frames cut from many reads would be.
            var read = ByteBuffer(repeating: 0, count: 4096)
            read.setInteger(UInt8(truncatingIfNeeded: n), at: 100)
            let byte = read.getSlice(at: 100, length: 1)!
            let padding = n % 1000 == 0 ? 3 : nil
            held.hold(
                Self.data(byte, endStream: n == 65_534, padding: padding),
                flowControlled: 1 + (padding.map { $0 + 1 } ?? 0), isHead: false)
            expected.writeInteger(UInt8(truncatingIfNeeded: n))
            flowControlled += 1 + (padding.map { $0 + 1 } ?? 0)
        }
        #expect(held.bytes == 65_535)
        // One buffer for them all: a slice kept per frame would have held 65,535 read buffers of 4 KiB (256 MiB).
        #expect(held.capacity <= 2 * 65_536, "the held bytes take \(held.capacity) bytes")
        let frames = held.take()
        #expect(frames.count == 1)
        guard case .data(let data) = frames.first?.payload, case .byteBuffer(let bytes) = data.data else {
            Issue.record("not one DATA frame: \(frames)")
            return
        }
        #expect(bytes == expected)
        #expect(data.endStream)
        #expect(frames.first?.flowControlled == flowControlled, "the window given back for them would be wrong")
        #expect(held.isEmpty && held.bytes == 0)
    }

    @Test("head, DATA and trailers come out in their order, each once; a HEADERS after a held head is trailers")
    func order() {
        var held = HTTP2HeldFrames()
        let head = HPACKHeaders([(":method", "POST"), (":path", "/x")])
        let trailers = HPACKHeaders([("grpc-status", "0")])
        held.hold(.headers(.init(headers: head)), flowControlled: 0, isHead: true)
        held.hold(Self.data(ByteBuffer(string: "ab")), flowControlled: 2, isHead: true)
        held.hold(Self.data(ByteBuffer(string: "cd")), flowControlled: 2, isHead: true)
        held.hold(.headers(.init(headers: trailers, endStream: true)), flowControlled: 0, isHead: true)
        let frames = held.take()
        #expect(frames.count == 3)
        if frames.count == 3 {
            guard case .headers(let first) = frames[0].payload, case .data(let body) = frames[1].payload,
                case .headers(let last) = frames[2].payload
            else {
                Issue.record("out of order: \(frames)")
                return
            }
            #expect(first.headers == head && last.headers == trailers && last.endStream)
            #expect(body.data == .byteBuffer(ByteBuffer(string: "abcd")) && !body.endStream)
            #expect(frames[1].flowControlled == 4)
        }
        #expect(held.take().isEmpty)

        // A head and its trailers with no DATA between: the second HEADERS is the trailers, not a second head.
        held.hold(.headers(.init(headers: head)), flowControlled: 0, isHead: true)
        held.hold(.headers(.init(headers: trailers, endStream: true)), flowControlled: 0, isHead: true)
        let pair = held.take().compactMap { frame -> HPACKHeaders? in
            if case .headers(let headers) = frame.payload { return headers.headers }
            return nil
        }
        #expect(pair == [head, trailers])
    }

    /// A client may send PRIORITY and WINDOW_UPDATE frames for a stream without end: NIOHTTP2 acts on them and hands
    /// them up. A stream whose exchange reads nothing (an upload to an upstream that is not reading) must not keep them.
    @Test("PRIORITY, WINDOW_UPDATE and RST_STREAM frames for a stream are never held")
    func notHeld() throws {
        let channel = EmbeddedChannel()
        let core = ProxyServerCore(
            installed: NothingInstalled(), logger: ProxyHarness.silentLogger, metrics: ProxyMetrics(),
            timeouts: ProxyTimeouts())
        let table = HTTP2StreamTable(core: core, loop: EventLoopState(eventLoop: channel.embeddedEventLoop))
        try channel.pipeline.syncOperations.addHandler(table)
        // Never started: its exchange has not asked for anything, so whatever it keeps is held.
        let stream = HTTP2ClientStream(
            id: 1, table: table, metrics: core.metrics, eventLoop: channel.eventLoop,
            windowTarget: HTTP2StreamTable.windowTarget, connectionWritable: true)
        for _ in 0..<10_000 {
            stream.received(.priority(.init(exclusive: false, dependency: 3, weight: 1)))
            stream.received(.windowUpdate(windowSizeIncrement: 1))
        }
        stream.received(.rstStream(.cancel))
        #expect(stream.heldFrames.isEmpty)
        stream.received(Self.data(ByteBuffer(string: "abc")))
        #expect(stream.heldFrames.bytes == 3)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}
