import NIOHTTP1

/// A response whose final head has arrived and whose body is delivered chunk by chunk as it arrives
/// (`TestClient.stream` / `TestConnection.stream`), for server-sent events and other streaming checks.
///
/// `chunks` yields each body part as NIO's decoder delivered it (one SSE event may span parts, or parts may
/// coalesce — accumulate, e.g. with `readText(_:until:)`). It finishes when the response ends and throws
/// `TestSupportError` if the connection closes mid-body or nothing arrives for the timeout. The chunks are
/// buffered unboundedly: use `send` (which hashes as it goes) for large bodies.
struct TestStream: Sendable {
    /// The final response head.
    let head: HTTPResponseHead
    /// 1xx heads received before it.
    let informational: [HTTPResponseHead]
    /// The body, part by part.
    let chunks: AsyncThrowingStream<[UInt8], any Error>
    /// The connection carrying it.
    let connection: TestConnection

    /// The status of the final head.
    var status: HTTPResponseStatus { self.head.status }
    /// The headers of the final head.
    var headers: HTTPHeaders { self.head.headers }

    /// Closes the connection (abandons the stream).
    func close() async {
        await self.connection.close()
    }

    /// Reads parts from `iterator` until the text accumulated in this call contains `marker`; returns that text.
    /// Throws `TestSupportError.connectionClosed` if the body ends first.
    ///
    ///     var events = stream.chunks.makeAsyncIterator()
    ///     let first = try await TestStream.readText(&events, until: "data: one\n\n")
    static func readText(
        _ iterator: inout AsyncThrowingStream<[UInt8], any Error>.Iterator, until marker: String
    ) async throws -> String {
        var bytes: [UInt8] = []
        while true {
            guard let part = try await iterator.next() else {
                throw TestSupportError.connectionClosed(head: nil, bodyBytes: bytes.count)
            }
            bytes += part
            let text = String(decoding: bytes, as: UTF8.self)
            if text.contains(marker) {
                return text
            }
        }
    }
}
