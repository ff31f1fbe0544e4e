import NIOCore
import NIOHTTP1
import NIOPosix

extension TestClient {
    /// ``raw(port:bytes:expectedResponses:requestMethods:timeout:)`` with the bytes written as `pieces`, one write
    /// and flush each, in order: the differential harness's read splits on a real socket. (The kernel may still join
    /// two pieces into one read; the in-process NIOHTTP1 reference is where the splits are exact.)
    ///
    /// `endOfInput` closes the client's side of the connection after the last piece, for a stream the proxy would
    /// otherwise wait on for more bytes (it ends inside a message, or before any).
    static func raw(
        port: Int, pieces: [[UInt8]], endOfInput: Bool, expectedResponses: Int, requestMethods: [String] = [],
        timeout: Duration = defaultTimeout
    ) async throws -> [TestResponse] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: [TestResponse].self)
        let methods = requestMethods.map { HTTPMethod(rawValue: $0) }
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(TimeAmount(timeout))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(RawBytesWriter())
                    try pipeline.addHandler(
                        ByteToMessageHandler(
                            HTTPResponseDecoder(
                                leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
                    try pipeline.addHandler(
                        RawResponseCollector(
                            expected: expectedResponses, methods: methods, promise: promise, timeout: timeout))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        } catch {
            promise.fail(error)
            throw error
        }
        let buffers = pieces.map { ByteBuffer(bytes: $0) }
        loop.execute {
            do {
                let writer = try channel.pipeline.syncOperations.handler(type: RawBytesWriter.self)
                // A write the proxy's close cuts short is not an error here: what reached it is what counts.
                for buffer in buffers { writer.send(buffer, promise: nil) }
                if endOfInput { channel.close(mode: .output, promise: nil) }
            } catch {
                promise.fail(error)
            }
        }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}
