import Crypto
import Foundation

/// The `Sec-WebSocket-Accept` an upstream answers a handshake with (RFC 6455 §4.2.2): base64 of the SHA-1 of the
/// client's key and the protocol's GUID.
enum WebSocketAccept {
    /// RFC 6455 §1.3.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    static func value(for key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + guid).utf8))).base64EncodedString()
    }
}
