import NIOCore
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane

/// `grpc-timeout`'s grammar (gRPC's PROTOCOL-HTTP2.md: `1*8DIGIT` then `H` `M` `S` `m` `u` `n`), and which requests
/// the proxy takes a deadline from.
@Suite("grpc-timeout, pure")
struct GRPCTimeoutTests {
    @Test(
        "every unit, and the longest value",
        arguments: [
            ("1H", TimeAmount.hours(1)), ("2M", .minutes(2)), ("3S", .seconds(3)), ("250m", .milliseconds(250)),
            ("7u", .microseconds(7)), ("9n", .nanoseconds(9)), ("99999999S", .seconds(99_999_999)),
            ("00000001m", .milliseconds(1)), ("0m", .nanoseconds(0)),
        ])
    func valid(value: String, amount: TimeAmount) {
        #expect(GRPCTimeout.parse(value) == amount)
    }

    @Test(
        "anything else is no deadline: passed on for the server to judge",
        arguments: [
            "", "S", "10", "123456789S", "1s", "1h", "1.5S", "-1S", "+1S", " 1S", "1S ", "1 S", "1SS", "１S", "0x1S",
            "99999999H",  // beyond what the clock holds: no deadline at all
        ])
    func malformed(value: String) {
        #expect(GRPCTimeout.parse(value) == nil)
    }

    @Test("only a gRPC call's one grpc-timeout counts")
    func whichRequests() throws {
        func limit(_ fields: [(String, String)]) throws -> TimeAmount? {
            let head = HTTPRequestHead(
                version: .http1_1, method: .POST, uri: "/pkg.Echo/Unary", headers: HTTPHeaders(fields))
            return GRPCTimeout.limit(of: try ClientRequest(head))
        }
        #expect(try limit([("content-type", "application/grpc"), ("grpc-timeout", "5S")]) == .seconds(5))
        #expect(try limit([("content-type", "application/grpc+proto"), ("grpc-timeout", "5S")]) == .seconds(5))
        #expect(try limit([("content-type", "application/json"), ("grpc-timeout", "5S")]) == nil)
        #expect(try limit([("content-type", "application/grpc-web"), ("grpc-timeout", "5S")]) == nil)
        #expect(try limit([("content-type", "application/grpc")]) == nil)
        #expect(
            try limit([("content-type", "application/grpc"), ("grpc-timeout", "5S"), ("grpc-timeout", "1S")]) == nil)
    }
}
