import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane

/// The data plane's response decoder on its own (#24): what it delivers for the bytes an upstream sends, in any
/// pieces, given the requests written through it. Its grammar is the codec's (BearerCodecTests) and the three
/// references' (the response Differential suites); these are the decoder's own decisions: what the request says
/// about the response's framing, 1xx, the `101`'s bytes, the end of a body delimited by the close, truncation.
@Suite("ResponseDecoder: the codec delivering upstream responses to the data plane")
struct ResponseDecoderTests {
    /// What a channel with the decoder delivered: heads, body bytes per response, ends with their trailers, bytes
    /// passed on as they came, and the error that stopped it.
    struct Delivered {
        var heads: [UpstreamResponse] = []
        var bodies: [[UInt8]] = []
        /// Each end's trailer section, as it came.
        var ends: [String?] = []
        var passedOn: [UInt8] = []
        var error: (any Error)?
    }

    /// Tells the decoder of `requests`, then feeds it `pieces`; `endOfInput` closes the connection after them,
    /// `remove` takes the bytes it holds instead (as the tunnel does).
    static func decode(
        requests: [HTTPRequestHead] = [get], _ pieces: [String], endOfInput: Bool = false, remove: Bool = false
    ) throws -> Delivered {
        var decoder = ResponseDecoder()
        for request in requests {
            decoder.requestSent(
                UpstreamRequestHead(
                    bytes: ByteBuffer(), chunked: false, isHead: request.method == .HEAD,
                    asksToUpgrade: request.headers.contains(name: "upgrade")))
        }
        var delivered = Delivered()
        func drain(seenEOF: Bool) throws {
            while let part = try decoder.next(seenEOF: seenEOF) {
                switch part {
                case .head(let head):
                    delivered.heads.append(head)
                    delivered.bodies.append([])
                case .body(let buffer): delivered.bodies[delivered.bodies.count - 1] += buffer.readableBytesView
                case .end(let trailers): delivered.ends.append(trailers.map { String(buffer: $0) })
                }
            }
        }
        for piece in pieces {
            decoder.append(ByteBuffer(string: piece))
            do {
                try drain(seenEOF: false)
            } catch {
                delivered.error = error
                break
            }
        }
        if remove, delivered.error == nil, let bytes = decoder.takeUndecodedBytes() {
            delivered.passedOn += bytes.readableBytesView
        }
        if endOfInput, delivered.error == nil {
            do { try drain(seenEOF: true) } catch { delivered.error = error }
        }
        return delivered
    }

    static let get = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["Host": "u"])
    static let head = HTTPRequestHead(version: .http1_1, method: .HEAD, uri: "/", headers: ["Host": "u"])
    static let upgrade = HTTPRequestHead(
        version: .http1_1, method: .GET, uri: "/ws",
        headers: ["Host": "u", "Connection": "upgrade", "Upgrade": "websocket"])

    static func oneByteAtATime(_ text: String) -> [String] {
        text.map { String($0) }
    }

    @Test("responses in any pieces: each head, its body bytes without framing, its end with the trailers")
    func responses() throws {
        let stream =
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
            + "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Sum: 9\r\n\r\n"
            + "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n"
        for pieces in [[stream], Self.oneByteAtATime(stream)] {
            let delivered = try Self.decode(requests: [Self.get, Self.get, Self.get], pieces)
            #expect(delivered.error == nil)
            #expect(delivered.heads.map(\.status.code) == [200, 201, 204])
            #expect(delivered.bodies == [Array("hello".utf8), Array("abcde".utf8), []])
            #expect(delivered.ends == [nil, "X-Sum: 9\r\n", nil])
            #expect(delivered.heads[1].headers["transfer-encoding"] == ["chunked"])
        }
    }

    @Test("the answer to HEAD has no body, whatever its Content-Length says; the next response follows it")
    func answerToHead() throws {
        let delivered = try Self.decode(
            requests: [Self.head, Self.get],
            ["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"])
        #expect(delivered.error == nil)
        #expect(delivered.bodies == [[], Array("hi".utf8)])
        #expect(delivered.ends.count == 2)
    }

    @Test("1xx heads come alone, then the final response to the same request")
    func informational() throws {
        let delivered = try Self.decode(
            [
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"
            ]
        )
        #expect(delivered.error == nil)
        #expect(delivered.heads.map(\.status.code) == [100, 103, 200])
        #expect(delivered.ends.count == 1)
        #expect(delivered.bodies.last == Array("x".utf8))
    }

    @Test("a body delimited by the close ends at the close, and the head says the connection is not kept")
    func untilClose() throws {
        let delivered = try Self.decode(["HTTP/1.1 200 OK\r\n\r\nsome ", "bytes"], endOfInput: true)
        #expect(delivered.error == nil)
        #expect(delivered.bodies == [Array("some bytes".utf8)])
        #expect(delivered.ends.count == 1)
        #expect(delivered.heads.first?.keepAlive == false)
    }

    @Test(
        "a connection closed inside a response is an error, never an end",
        arguments: [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhe",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", "HTTP/1.1 200 OK\r\nContent-",
        ])
    func truncated(_ text: String) throws {
        let delivered = try Self.decode([text], endOfInput: true)
        #expect(delivered.error as? ResponseDecoder.Failure == .truncated)
        #expect(delivered.ends.isEmpty)
    }

    @Test("bytes that answer no request are refused")
    func unsolicited() throws {
        let delivered = try Self.decode(
            ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"])
        #expect(delivered.heads.count == 1)
        #expect(delivered.error as? ResponseDecoder.Failure == .unsolicited)
        #expect(
            try Self.decode(requests: [], ["HTTP/1.1 200 OK\r\n"]).error as? ResponseDecoder.Failure == .unsolicited)
    }

    @Test("an HTTP/1.1 Connection that says only keep-alive is left out; one that says more, or in 1.0, is kept")
    func redundantConnection() throws {
        let delivered = try Self.decode(
            requests: [Self.get, Self.get, Self.get],
            [
                "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\nContent-Length: 0\r\n\r\n"
                    + "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"
            ])
        #expect(delivered.error == nil)
        #expect(delivered.heads.map { $0.headers["connection"] } == [[], ["keep-alive, x-hop"], ["keep-alive"]])
        #expect(delivered.heads.map(\.keepAlive) == [true, true, true])
    }

    @Test("after a response that ends the connection, nothing more is read")
    func lastResponse() throws {
        let delivered = try Self.decode(
            requests: [Self.get, Self.get],
            [
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
            ])
        #expect(delivered.error == nil)
        #expect(delivered.heads.count == 1)
        #expect(delivered.heads.first?.keepAlive == false)
    }

    @Test("a 101 to an upgrade request ends the response; the new protocol's bytes wait for the tunnel")
    func switchingProtocols() throws {
        let frames = "\u{81}\u{2}hi"
        let handshake = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
        let delivered = try Self.decode(requests: [Self.upgrade], [handshake + frames], remove: true)
        #expect(delivered.error == nil)
        #expect(delivered.heads.map(\.status.code) == [101])
        #expect(delivered.ends.count == 1)
        #expect(delivered.passedOn == Array(frames.utf8))
    }

    @Test(
        "a 101 is refused unless the request asked to upgrade and it names the protocol, once, as a hop-by-hop field",
        arguments: [
            (false, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"),
            (true, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"),
            (true, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n"),
            (true, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: a\r\nUpgrade: b\r\n\r\n"),
            (true, "HTTP/1.0 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"),
            (
                true,
                "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 1\r\n\r\n"
            ),
        ])
    func switchRefused(asked: Bool, text: String) throws {
        let delivered = try Self.decode(requests: [asked ? Self.upgrade : Self.get], [text])
        #expect(delivered.error is HeadError)
        #expect(delivered.heads.isEmpty)
    }
}
