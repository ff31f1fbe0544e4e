import NIOCore
import NIOHPACK
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane

/// The client connection's response heads as HTTP/2 header sections, and how they use HPACK's dynamic table
/// (RFC 7541 §2.3.2): fields that repeat from one response to the next are indexed, the request id is not.
@Suite("HTTP/2 response fields")
struct HTTP2ResponseFieldsTests {
    static func head(requestID: String) throws -> HPACKHeaders {
        HTTP2ResponseFields.head(
            try UpstreamResponse.parsing(
                "HTTP/1.1 200 OK\r\nserver: nginx\r\ncontent-type: application/json\r\ncontent-length: 11\r\n"
                    + "connection: keep-alive\r\nx-request-id: \(requestID)\r\n\r\n"))
    }

    @Test("connection-specific fields are dropped; the request id is never indexed, the rest may be")
    func fields() throws {
        let headers = try Self.head(requestID: "req-1")
        #expect(headers.map(\.name) == [":status", "server", "content-type", "content-length", "x-request-id"])
        #expect(headers.first { $0.name == "x-request-id" }?.indexable == .nonIndexable)
        #expect(headers.filter { $0.name != "x-request-id" }.allSatisfy { $0.indexable == .indexable })
    }

    @Test("a field the upstream's Connection names is dropped wherever it stands, with the connection's own fields")
    func connectionOptions() throws {
        let headers = HTTP2ResponseFields.head(
            try UpstreamResponse.parsing(
                "HTTP/1.1 200 OK\r\nx-hop: 1\r\ncontent-length: 0\r\nConnection: X-Hop, close\r\n"
                    + "keep-alive: timeout=5\r\nx-kept: 2\r\n\r\n"))
        #expect(headers.map(\.name) == [":status", "content-length", "x-kept"])
    }

    /// A stream's forwarded head is built from the upstream's field lines with no HTTP/1.1 head between: it must say
    /// exactly what the HTTP/1.1 client's head says, as HTTP/2 carries it, whatever the upstream sent, the route and
    /// the request.
    @Test("a forwarded head's header section is the HTTP/1.1 client's head, field for field, for every upstream head")
    func forwardedAgrees() throws {
        let plain = try ForwardingTests.binding(
            #"{ "prefix": "/graph", "upstream": "https://graph.example.com:8443/v1.0", "scopes": ["api://g/Read"], "#
                + #""tokenType": "bearer" }"#)
        // `auto`, the default: the route may present a DPoP-bound token, so it signs proofs.
        let proofs = try ForwardingTests.binding(
            #"{ "prefix": "/graph", "upstream": "https://graph.example.com:8443/v1.0", "scopes": ["api://g/Read"] }"#)
        #expect(plain.proofs == nil && proofs.proofs != nil)
        let statuses = ["200 OK", "204 No Content", "302 Found", "304 Not Modified", "404 Not Found"]
        let fields: [String] = [
            "Content-Length: 0\r\n",
            "Server: nginx\r\nContent-Type: text/plain\r\nCONTENT-LENGTH: 3\r\nX-Request-Id: theirs\r\n",
            "Transfer-Encoding: chunked\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\n"
                + "Upgrade: h2c\r\nProxy-Connection: close\r\nTE: trailers\r\nTrailer: grpc-status\r\n",
            "Location: https://graph.example.com:8443/v1.0/users/1?x=1\r\nContent-Length: 0\r\n",
            "location: https://elsewhere.example/x\r\nContent-Length: 0\r\n",
            "Access-Control-Allow-Origin: *\r\nAccess-Control-Allow-Credentials: true\r\n"
                + "Access-Control-Max-Age: 5\r\nVary: Accept\r\nContent-Length: 0\r\n",
            "DPoP-Nonce: n-1\r\nWWW-Authenticate: DPoP error=\"use_dpop_nonce\"\r\nContent-Length: 0\r\n",
            "Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 5\r\nConnection: content-length\r\n",
            "Proxy-Authenticate: Basic\r\nContent-Length: 0\r\n",
        ]
        var compared = 0
        for status in statuses {
            for lines in fields {
                for method in [HTTPMethod.GET, .HEAD] {
                    let upstream: UpstreamResponse
                    do {
                        upstream = try UpstreamResponse.parsing(
                            "HTTP/1.1 \(status)\r\n\(lines)\r\n", requestWasHead: method == .HEAD)
                    } catch {
                        continue  // The codec refuses it (a 204 or 304 with chunks): nothing reaches the client.
                    }
                    let request = HTTPRequestHead(version: .http1_1, method: method, uri: "/graph/x")
                    for binding in [plain, proofs] {
                        for origin in [nil, "https://app.example"] {
                            // ``Forwarding/clientResponse`` compares the two.
                            _ = try Forwarding.clientResponse(
                                upstream: upstream, request: request, binding: binding, requestID: "rid",
                                keepAlive: true, corsOrigin: origin)
                            compared += 1
                        }
                    }
                }
            }
        }
        #expect(compared >= 150)
    }

    @Test(
        "a forwarded head: names in lowercase, HTTP/1.1's connection fields gone, Location rewritten, the proxy's after"
    )
    func forwarded() throws {
        let route = try ForwardingTests.binding(
            #"{ "prefix": "/graph", "upstream": "https://graph.example.com:8443/v1.0", "scopes": ["api://g/Read"] }"#)
        #expect(route.proofs != nil)
        let upstream = try UpstreamResponse.parsing(
            "HTTP/1.1 302 Found\r\nX-Mixed-Case: A\r\nTransfer-Encoding: chunked\r\nConnection: x-hop\r\n"
                + "X-Hop: 1\r\nLocation: https://graph.example.com:8443/v1.0/users/1\r\nDPoP-Nonce: n\r\n"
                + "Access-Control-Allow-Origin: *\r\n\r\n")
        let headers = HTTP2ResponseFields.forwarded(
            upstream, binding: route,
            adding: Forwarding.ResponseAdditions(requestID: "rid", corsOrigin: "https://app.example"))
        #expect(
            headers.map { "\($0.name): \($0.value)" } == [
                ":status: 302", "x-mixed-case: A", "location: /graph/users/1", "x-request-id: rid",
                "access-control-allow-origin: https://app.example", "access-control-expose-headers: x-request-id",
                "vary: Origin",
            ])
        #expect(headers.first { $0.name == "x-request-id" }?.indexable == .nonIndexable)
    }

    @Test("field names are lowercased byte by byte: letters only")
    func lowercasedName() {
        let bytes = ByteBuffer(string: "X-Az_09!#$%&'*+.^`|~ZZ")
        let name = HTTP2ResponseFields.lowercasedName(bytes.readableBytesUInt8Span, 0..<bytes.readableBytes)
        #expect(name == "x-az_09!#$%&'*+.^`|~zz")
        #expect(name == String(buffer: bytes).lowercased())
    }

    /// After the first response on a connection, each costs a byte for each repeated field and a literal for the
    /// id, name and value. With the ids indexed, every id would go into the table and, once it is full, push out the fields worth
    /// keeping, which the next response would send as literals again.
    @Test("response after response on one connection, repeated fields encode as one byte each")
    func dynamicTable() throws {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var largest = 0
        var bound = 0
        for n in 0..<300 {
            var encoded = ByteBuffer()
            let id = "0123456789abcdef-\(n)"
            try encoder.encode(headers: try Self.head(requestID: id), to: &encoded)
            guard n > 0 else { continue }
            // `:status` and three fields indexed (a byte each), then the id as a literal without indexing: a
            // prefix byte, then its name and its value, each a length byte and at most its bytes (Huffman coding
            // only shortens them).
            bound = 4 + 1 + (1 + "x-request-id".utf8.count) + (1 + id.utf8.count)
            largest = max(largest, encoded.readableBytes - bound)
        }
        #expect(largest <= 0, "a response took \(largest) bytes over \(bound)")
    }
}
