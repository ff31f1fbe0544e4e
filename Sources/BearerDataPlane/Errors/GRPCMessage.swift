/// `grpc-message`'s encoding (gRPC's PROTOCOL-HTTP2.md): UTF-8, with every byte outside `%x20-%x7E`, and `%` itself,
/// written as `%XX`.
enum GRPCMessage {
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += (hex.count == 1 ? "%0" : "%") + hex
            }
        }
        return out
    }
}
