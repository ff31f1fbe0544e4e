import NIOCore
import NIOHTTP1
import NIOPosix

/// One-shot HTTP/1.1 client calls for talking to the proxy (or to a `FakeUpstream`) on 127.0.0.1.
///
/// `send`, `stream` and `abort` each open a fresh `TestConnection` (see it for exactly what is sent), and close
/// it when done. `raw` writes arbitrary bytes and decodes the answers with NIO's `HTTPResponseDecoder`. Every call
/// fails with `TestSupportError.timedOut` after `timeout` without progress, so a broken proxy fails a test instead
/// of hanging it.
enum TestClient {
    /// The default inactivity timeout of every call.
    static let defaultTimeout: Duration = .seconds(30)

    /// Where `abort` closes the connection.
    enum AbortPoint: Sendable {
        /// As soon as the final response head has arrived.
        case afterResponseHead
        /// As soon as at least this many response body bytes have arrived.
        case afterResponseBytes(Int)
        /// As soon as this many request body bytes have been written (handed to the kernel); needs a body at least
        /// that long. No response is awaited.
        case afterRequestBytes(Int)
    }

    /// Sends one request on a new connection and returns the complete response.
    static func send(
        port: Int, method: String = "GET", uri: String, headers: [(String, String)] = [], body: TestBody = .none,
        version: HTTPVersion = .http1_1, tls: Bool = false, timeout: Duration = defaultTimeout
    ) async throws -> TestResponse {
        let connection = try await TestConnection.open(port: port, tls: tls, timeout: timeout)
        do {
            let response = try await connection.send(
                method: method, uri: uri, headers: headers, body: body, version: version, timeout: timeout)
            await connection.close()
            return response
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Sends one request on a new connection and returns once the final head has arrived, with the body as a
    /// stream of parts (see `TestStream`). The connection closes when the body ends or the stream is abandoned;
    /// call `close()` on the result to end it early.
    static func stream(
        port: Int, method: String = "GET", uri: String, headers: [(String, String)] = [], body: TestBody = .none,
        version: HTTPVersion = .http1_1, timeout: Duration = defaultTimeout
    ) async throws -> TestStream {
        let connection = try await TestConnection.open(port: port, timeout: timeout)
        do {
            return try await connection.stream(
                method: method, uri: uri, headers: headers, body: body, version: version, timeout: timeout,
                closeWhenFinished: true)
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Starts a request on a new connection and closes the connection abruptly at `point` (e.g. after the head of
    /// a large download, or midway through an upload). Returns the final response head if one had arrived. Returns
    /// once the connection is closed on the client side.
    static func abort(
        port: Int, method: String = "GET", uri: String, headers: [(String, String)] = [], body: TestBody = .none,
        at point: AbortPoint = .afterResponseHead, timeout: Duration = defaultTimeout
    ) async throws -> HTTPResponseHead? {
        let connection = try await TestConnection.open(port: port, timeout: timeout)
        do {
            let head = try await connection.abort(
                method: method, uri: uri, headers: headers, body: body, at: point, timeout: timeout)
            await connection.close()
            return head
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Writes `bytes` as they are in one write (e.g. two pipelined requests, odd header spellings, no `Host`) on a
    /// new connection and returns the responses NIO's `HTTPResponseDecoder` decodes, in order: once
    /// `expectedResponses` have ended, or fewer if the server closes the connection first (a response cut short by
    /// the close is an error).
    ///
    /// The decoder is told the method of each request in `requestMethods` (in order; missing entries are GET), so
    /// a HEAD response is framed right only when its request is listed as HEAD. `requestBodyFullySent` is always
    /// true in raw mode (the bytes are written whole).
    static func raw(
        port: Int, bytes: [UInt8], expectedResponses: Int, requestMethods: [String] = [],
        timeout: Duration = defaultTimeout
    ) async throws -> [TestResponse] {
        try await raw(
            port: port, pieces: [bytes], endOfInput: false, expectedResponses: expectedResponses,
            requestMethods: requestMethods, timeout: timeout)
    }

    /// `raw` with the request given as text (use `\r\n` line ends).
    static func raw(
        port: Int, text: String, expectedResponses: Int, requestMethods: [String] = [],
        timeout: Duration = defaultTimeout
    ) async throws -> [TestResponse] {
        try await self.raw(
            port: port, bytes: Array(text.utf8), expectedResponses: expectedResponses, requestMethods: requestMethods,
            timeout: timeout)
    }
}
