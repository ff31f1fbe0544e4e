import BearerCodec
import BearerHTTP
import NIOCore

/// A gRPC call's own deadline, its `grpc-timeout` request field (gRPC's PROTOCOL-HTTP2.md: `TimeoutValue
/// TimeoutUnit`, at most 8 ASCII digits then one of `H` `M` `S` `m` `u` `n`). The proxy bounds its own wait for the
/// upstream's answer by it, and passes the field on unchanged: the server keeps its own deadline too.
///
/// A value that is not of that grammar is no deadline for the proxy: it is passed on, and the server — which owns
/// the call's status — decides what it means (grpcio's answers INTERNAL); a proxy that refused it would overrule a
/// server that accepts more.
enum GRPCTimeout {
    /// The call's deadline, as an amount of time from when its head arrived; nil when `request` is not a gRPC call,
    /// carries no `grpc-timeout`, carries more than one, or carries one that is malformed.
    static func limit(of request: ClientRequest) -> TimeAmount? {
        // The field first: most requests have none, and looking costs them no allocation.
        let values = request.values("grpc-timeout")
        guard values.count == 1, let value = values.first,
            LocalResponse.isGRPC(contentTypes: request.values("content-type"))
        else { return nil }
        return parse(value)
    }

    /// `value` as an amount of time, when it is exactly `1*8DIGIT unit`. An amount beyond what ``TimeAmount`` holds
    /// (8 digits of hours is some 11,000 years) is no deadline at all: nil, as for no field.
    static func parse(_ value: String) -> TimeAmount? {
        let bytes = Array(value.utf8)
        guard bytes.count >= 2, bytes.count <= 9, let unit = bytes.last else { return nil }
        var amount: Int64 = 0
        for byte in bytes.dropLast() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            amount = amount * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        let nanosecondsPerUnit: Int64
        switch unit {
        case UInt8(ascii: "H"): nanosecondsPerUnit = 3_600_000_000_000
        case UInt8(ascii: "M"): nanosecondsPerUnit = 60_000_000_000
        case UInt8(ascii: "S"): nanosecondsPerUnit = 1_000_000_000
        case UInt8(ascii: "m"): nanosecondsPerUnit = 1_000_000
        case UInt8(ascii: "u"): nanosecondsPerUnit = 1_000
        case UInt8(ascii: "n"): nanosecondsPerUnit = 1
        default: return nil
        }
        let (nanoseconds, overflow) = amount.multipliedReportingOverflow(by: nanosecondsPerUnit)
        guard !overflow else { return nil }
        return .nanoseconds(nanoseconds)
    }
}
