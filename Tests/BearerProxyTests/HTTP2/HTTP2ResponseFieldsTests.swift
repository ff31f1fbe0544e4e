import NIOCore
import NIOHPACK
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
