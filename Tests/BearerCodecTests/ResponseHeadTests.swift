import Testing

@testable import BearerCodec

/// The response side's own rules (#24): where a response's grammar differs from a request's — the request it
/// answers, 1xx and 101, and what the proxy can re-frame rather than refuse.
@Suite("ResponseHead: the rules that depend on the request and on the status")
struct ResponseHeadTests {
    static func parse(_ text: String, head: Bool = false, upgrade: Bool = false) -> Result<ResponseHead?, HeadError> {
        Array(text.utf8).parseResponse(requestWasHead: head, upgradeRequested: upgrade)
    }

    static let switching = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"

    @Test("a 101 answers only a request that asked to upgrade, and then switches")
    func switchingProtocols() throws {
        #expect(Self.parse(Self.switching) == .failure(.malformed(.statusLine)))
        let head = try #require(try Self.parse(Self.switching, upgrade: true).get())
        #expect(head.switchesProtocols)
        #expect(!head.isInformational)
        #expect(head.framing == .none)
    }

    @Test(
        "a 101 that does not name its protocol once in Upgrade and in Connection, or frames a body, is refused",
        arguments: [
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", HeadError.Reason.switchingProtocols),
            ("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n", .switchingProtocols),
            ("HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nUpgrade: a\r\nUpgrade: b\r\n\r\n", .switchingProtocols),
            ("HTTP/1.0 101 OK\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", .switchingProtocols),
            (
                "HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n",
                .framingInInformational
            ),
        ])
    func switchRefused(_ text: String, reason: HeadError.Reason) {
        #expect(Self.parse(text, upgrade: true) == .failure(.malformed(reason)))
    }

    @Test(
        "a 1xx's or a 204's framing fields are read past, as all three references read them: no body",
        arguments: [
            "HTTP/1.1 100 Continue\r\nContent-Length: 5\r\n\r\n",
            "HTTP/1.1 103 Early Hints\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n",
            "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
        ])
    func framingWithoutBody(_ text: String) throws {
        let head = try #require(try Self.parse(text).get())
        #expect(head.framing == .none)
        #expect(head.length == text.utf8.count)
    }

    @Test("a status line without the space before an empty reason is read as all three references read it")
    func statusWithoutReason() throws {
        let head = try #require(try Self.parse("HTTP/1.1 200\r\nContent-Length: 2\r\n\r\n").get())
        #expect(head.status == 200)
        #expect(head.framing == .length(2))
        for text in ["HTTP/1.1 200\n\r\n", "HTTP/1.1 200\rX\r\n\r\n", "HTTP/1.1 200X\r\n\r\n", "HTTP/1.1 20\r\n\r\n"] {
            #expect(throws: HeadError.self) { try Self.parse(text).get() }
        }
    }

    @Test("Connection naming Content-Length: a response is framed by it (the proxy re-frames); a request is refused")
    func connectionNamingTheLength() throws {
        let response = try #require(
            try Self.parse("HTTP/1.1 200 OK\r\nConnection: content-length\r\nContent-Length: 2\r\n\r\n").get())
        #expect(response.framing == .length(2))
        let request = Array(
            "POST / HTTP/1.1\r\nHost: a\r\nConnection: content-length\r\nContent-Length: 2\r\n\r\n".utf8)
        #expect(request.parseRequest() == .failure(.malformed(.connection)))
    }
}
