import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane
@testable import BearerHTTP

/// The data plane's request decoder on its own (#24): what it delivers for the bytes a client sends, in any pieces.
/// Its strictness is the codec's (BearerCodecTests) and the three references' (the Differential suites); these are
/// the decoder's own decisions: parts, framing stripped, the connection's last request, the upgrade's bytes.
@Suite("RequestDecoder: the codec delivering request parts to the data plane")
struct RequestDecoderTests {
    /// What a channel with the decoder delivered: heads, body bytes per request, ends, and raw bytes passed on.
    struct Delivered {
        var heads: [HTTPRequestHead] = []
        var requests: [ClientRequest] = []
        var bodies: [[UInt8]] = []
        var ends = 0
        var error: (any Error)?
    }

    static func decode(_ pieces: [String], endOfInput: Bool = false) throws -> Delivered {
        var decoder = RequestDecoder(limits: HeadLimits())
        var delivered = Delivered()
        func drain(seenEOF: Bool) throws {
            while let part = try decoder.next(seenEOF: seenEOF) {
                switch part {
                case .head(let request):
                    delivered.heads.append(request.headWithFields)
                    delivered.requests.append(request)
                    delivered.bodies.append([])
                    // The head's bytes are exactly the head: what the upstream's head is written from.
                    #expect(request.bytes.readableBytes == request.parsed.length)
                    #expect(String(buffer: request.bytes).hasSuffix("\r\n\r\n"))
                case .body(let buffer): delivered.bodies[delivered.bodies.count - 1] += buffer.readableBytesView
                case .end:
                    delivered.ends += 1
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
        if endOfInput, delivered.error == nil {
            do { try drain(seenEOF: true) } catch { delivered.error = error }
        }
        return delivered
    }

    static func oneByteAtATime(_ text: String) -> [String] {
        text.map { String($0) }
    }

    @Test("pipelined requests in any pieces: each head, its body bytes without framing, its end")
    func pipelined() throws {
        let stream =
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            + "PUT /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n"
            + "GET /c?q=filter[a]|{b} HTTP/1.1\r\nHost: x\r\n\r\n"
        for pieces in [[stream], Self.oneByteAtATime(stream)] {
            let delivered = try Self.decode(pieces)
            #expect(delivered.error == nil)
            #expect(delivered.heads.map(\.uri) == ["/a", "/b", "/c?q=filter[a]|{b}"])
            #expect(delivered.heads.map(\.method) == [.POST, .PUT, .GET])
            #expect(delivered.bodies == [Array("hello".utf8), Array("abcde".utf8), []])
            #expect(delivered.ends == 3)
            #expect(delivered.heads[1].headers["transfer-encoding"] == ["chunked"])
        }
    }

    @Test("an HTTP/1.1 Connection that says only keep-alive is left out; one that names a field is kept")
    func redundantConnection() throws {
        let delivered = try Self.decode([
            "GET /a HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"
                + "GET /b HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\n\r\n"
        ])
        #expect(delivered.error == nil)
        #expect(delivered.heads.map { $0.headers["connection"] } == [[], ["keep-alive, x-hop"]])
        #expect(delivered.heads.map(\.isKeepAlive) == [true, true])
    }

    @Test("the head's fields are the client's, in order, values without surrounding whitespace")
    func fields() throws {
        let delivered = try Self.decode(["GET / HTTP/1.1\r\nHost: x\r\nX-A:  one \r\nx-a: two\r\nX-U: h\u{e9}\r\n\r\n"])
        let head = try #require(delivered.heads.first)
        #expect(head.headers.map { "\($0.name)=\($0.value)" } == ["Host=x", "X-A=one", "x-a=two", "X-U=h\u{e9}"])
    }

    @Test("M-SEARCH is delivered as the token the client sent, not NIOHTTP1's MSEARCH")
    func methodToken() throws {
        let head = try #require(try Self.decode(["M-SEARCH /x HTTP/1.1\r\nHost: x\r\n\r\n"]).heads.first)
        #expect(head.method.rawValue == "M-SEARCH")
    }

    @Test("every method the codec accepts is named as NIOHTTP1 names its token, the common ones without a string")
    func everyMethod() throws {
        let methods = [
            "GET", "PUT", "ACL", "HEAD", "POST", "COPY", "MOVE", "LOCK", "BIND", "LINK", "PATCH", "TRACE", "MKCOL",
            "MERGE", "PURGE", "QUERY", "DELETE", "UNLOCK", "REPORT", "SEARCH", "REBIND", "UNBIND", "NOTIFY", "UNLINK",
            "SOURCE", "OPTIONS", "PROPFIND", "CHECKOUT", "M-SEARCH", "PROPPATCH", "SUBSCRIBE", "MKCALENDAR",
            "MKACTIVITY", "UNSUBSCRIBE",
        ]
        for method in methods {
            let head = try #require(try Self.decode(["\(method) /x HTTP/1.1\r\nHost: x\r\n\r\n"]).heads.first)
            #expect(head.method == HTTPMethod(rawValue: method).asReceived, "\(method)")
            #expect(head.method.rawValue == method)
        }
    }

    @Test(
        "after the connection's last request nothing more is delivered",
        arguments: [
            "GET /1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "GET /1 HTTP/1.0\r\n\r\n",
            "GET /1 HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n",
            "GET http://x/1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        ])
    func lastRequest(first: String) throws {
        let delivered = try Self.decode([first + "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n", "GET /3 HTTP/1.1\r\n\n\n"])
        #expect(delivered.error == nil, "bytes after the last request are no one's: never refused")
        #expect(delivered.heads.count == 1)
        #expect(delivered.heads.first?.uri.hasSuffix("/1") == true)
        #expect(delivered.ends == 1)
        #expect(delivered.requests.first?.keepAlive == false, "the exchange must close after it")
    }

    @Test(
        "an HTTP/1.0 request that asks for keep-alive is not the last: what follows is read as requests",
        arguments: [
            "GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            "POST /1 HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\nabc",
            "OPTIONS * HTTP/1.0\r\nConnection: x-trace, KEEP-ALIVE\r\n\r\n",
        ])
    func http10KeepAlive(first: String) throws {
        let delivered = try Self.decode([first + "GET /2 HTTP/1.0\r\n\r\n", "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n"])
        #expect(delivered.error == nil)
        #expect(delivered.heads.count == 2, "the second is the last, the third no one's")
        #expect(delivered.heads.last?.uri == "/2")
        #expect(delivered.ends == 2)
        #expect(delivered.requests.map(\.keepAlive) == [true, false])
    }

    /// Whether a request keeps its connection (RFC 9112 §9.3), for every version, option and form of the target
    /// that decides it; the options are tokens of a list, in any case.
    @Test(
        "a request keeps its connection: HTTP/1.1 unless close; HTTP/1.0 with keep-alive, not close, not to a proxy",
        arguments: [
            ("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", true),
            ("GET /a HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n", true),
            ("GET /a HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n", false),
            ("GET http://x/a HTTP/1.1\r\nHost: x\r\n\r\n", true),
            ("GET /a HTTP/1.0\r\n\r\n", false),
            ("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
            ("GET /a HTTP/1.0\r\nConnection: KEEP-ALIVE\r\n\r\n", true),
            ("GET /a HTTP/1.0\r\nConnection: x-a ,keep-alive\r\n\r\n", true),
            ("GET /a HTTP/1.0\r\nConnection: x-a\r\nConnection: keep-alive\r\n\r\n", true),
            ("GET /a HTTP/1.0\r\nConnection: keep-alive-x\r\n\r\n", false),
            ("GET /a HTTP/1.0\r\nKeep-Alive: timeout=5\r\n\r\n", false),
            ("GET /a HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false),
            ("GET /a HTTP/1.0\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n", false),
            ("OPTIONS * HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
            ("GET http://x/a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false),
            ("GET HTTP://X/a HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n", false),
        ])
    func keepsItsConnection(head: String, keepAlive: Bool) throws {
        let request = try #require(try Self.decode([head]).requests.first)
        #expect(request.keepAlive == keepAlive, "\(head)")
    }

    @Test("an upgrade request is the last; the bytes behind it stay unread, for the tunnel")
    func upgradeBytes() throws {
        var decoder = RequestDecoder(limits: HeadLimits())
        let handshake =
            "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        let frame: [UInt8] = [0x81, 0x85, 1, 2, 3, 4, 0x69, 0x67, 0x6f, 0x68, 0x6e]
        var bytes = ByteBuffer(string: handshake)
        bytes.writeBytes(frame)
        decoder.append(bytes)
        guard case .head(let request) = try decoder.next() else {
            Issue.record("no head")
            return
        }
        #expect(request.line.uri == "/ws")
        guard case .end = try decoder.next() else {
            Issue.record("no end")
            return
        }
        // Nothing more is decoded; the frame is held whole, and handed over once.
        #expect(try decoder.next() == nil)
        let held = decoder.takeUndecodedBytes()
        #expect(held.map { Array($0.readableBytesView) } == frame)
        let again = decoder.takeUndecodedBytes()
        #expect(again == nil)
    }

    @Test("the bytes held behind an upgrade request are bounded: past the limit the connection is given up")
    func upgradeBytesBounded() throws {
        let limits = HeadLimits()
        var decoder = RequestDecoder(limits: limits)
        decoder.append(
            ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n"))
        while try decoder.next() != nil {}
        let chunk = ByteBuffer(repeating: 0x81, count: 16 * 1024)
        var failure: (any Error)?
        for _ in 0..<(RequestDecoder.bufferLimit(limits) / chunk.readableBytes + 2) {
            decoder.append(chunk)
            do { _ = try decoder.next() } catch {
                failure = error
                break
            }
        }
        #expect(failure is ByteToMessageDecoderError.PayloadTooLargeError, "\(String(describing: failure))")
    }

    @Test(
        "a refusal is the codec's, whole or in pieces, and at the end of input for a head that never ends",
        arguments: [
            ("GET / HTTP/1.1\r\nHost: x\nX: 1\r\n\r\n", HeadError.malformed(.bareLF)),
            ("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", .malformed(.obsFold)),
            ("CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n", .methodNotAllowed),
            ("BREW / HTTP/1.1\r\nHost: x\r\n\r\n", .unknownMethod),
            ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", .unsupportedVersion),
            (
                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nContent-Length: 1\r\n\r\n",
                .malformed(.trailer)
            ),
        ])
    func refusals(text: String, expected: HeadError) throws {
        for pieces in [[text], Self.oneByteAtATime(text)] {
            let delivered = try Self.decode(pieces, endOfInput: true)
            #expect(delivered.error as? HeadError == expected, "\(pieces.count) piece(s)")
        }
    }

    @Test("a malformed head that never ends is refused when the input ends, not dropped as incomplete")
    func refusedAtEndOfInput() throws {
        // 32 bytes a byte at a time (parsed at 1, 2, 4, … 32 bytes: incomplete), then a space before a colon that no
        // parse sees before the input ends — there is no end of head to make one.
        let text = "GET / HTTP/1.1\r\nHost: x\r\nX-Aaaaa" + " : b"
        let open = try Self.decode(Self.oneByteAtATime(text))
        #expect(open.error == nil && open.heads.isEmpty, "nothing to say yet")
        let ended = try Self.decode(Self.oneByteAtATime(text), endOfInput: true)
        #expect(ended.error as? HeadError == .malformed(.spaceBeforeColon))
    }

    @Test("a head past the size limit is refused once the limit is reached, however it arrives")
    func headTooLarge() throws {
        let limits = HeadLimits(headBytes: 256, targetBytes: 128, fields: 10)
        var decoder = RequestDecoder(limits: limits)
        var refused: (any Error)?
        decoder.append(ByteBuffer(string: "GET / HTTP/1.1\r\nX: "))
        for _ in 0..<300 {
            decoder.append(ByteBuffer(string: "a"))
            do { _ = try decoder.next() } catch {
                refused = error
                break
            }
        }
        #expect(refused as? HeadError == .headTooLarge)
    }
}

/// When an incomplete head is parsed again (``PendingHead``): a head sent a byte at a time costs a number of
/// parses that grows with the logarithm of its size, never one per byte — and the byte that ends it is never missed.
@Suite("PendingHead: an incomplete head is parsed again rarely, and always at its end")
struct PendingHeadTests {
    @Test("a byte at a time: about log2(n) parses before the end, and one at the end", arguments: [1_024, 32_000])
    func amortised(size: Int) {
        var pending = PendingHead()
        var buffer = ByteBuffer()
        var parses = 0
        // Whole lines (the sizes are multiples of 16), so that one more CRLF is the empty line that ends the head.
        let line = Array("X-Field: value\r\n".utf8)
        for index in 0..<size {
            buffer.writeInteger(line[index % line.count])
            if pending.worthParsing(buffer, limit: 1 << 20) {
                parses += 1
                pending.parsed(buffer)
            }
        }
        #expect(parses <= Int(log2(Double(size))) + 2, "\(parses) parses for \(size) bytes")
        buffer.writeString("\r\n")
        let atEnd = pending.worthParsing(buffer, limit: 1 << 20)
        #expect(atEnd, "the empty line ends the head: parse now")
    }

    @Test("an end split across reads is found", arguments: ["\r\n\r\n", "\n\n", "\n\r\n"])
    func splitEnd(end: String) {
        for split in 1..<end.utf8.count {
            var pending = PendingHead()
            var buffer = ByteBuffer(string: String(repeating: "a", count: 100))
            let first = pending.worthParsing(buffer, limit: 1 << 20)
            #expect(first)
            pending.parsed(buffer)
            buffer.writeString(String(end.prefix(split)))
            let early = pending.worthParsing(buffer, limit: 1 << 20)
            if !early {
                buffer.writeString(String(end.dropFirst(split)))
                let found = pending.worthParsing(buffer, limit: 1 << 20)
                #expect(found, "\(end.debugDescription) split at \(split)")
            }
        }
    }

    @Test("the size limit makes it parse, so that an oversized head is refused")
    func limit() {
        var pending = PendingHead()
        var buffer = ByteBuffer(string: String(repeating: "a", count: 600))
        pending.parsed(buffer)
        buffer.writeString(String(repeating: "a", count: 400))
        let atLimit = pending.worthParsing(buffer, limit: 1_000)
        #expect(atLimit)
    }
}
