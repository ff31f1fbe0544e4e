// A file of its own although short: percent-decoding (RFC 3986 §2.1), JSON's `\u` escapes and digests shown as text
// all need hexadecimal digits, in four folders.

import BearerJSON

extension UInt8 {
    /// The value of an ASCII hexadecimal digit, either case; nil for any other byte.
    package var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Sequence<UInt8> {
    /// Two lowercase hexadecimal digits per byte.
    package var lowercaseHex: String {
        map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
