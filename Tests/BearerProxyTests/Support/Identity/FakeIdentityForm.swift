import Foundation

/// `application/x-www-form-urlencoded` as the fake identity provider reads it (and as tests may write it).
enum FakeIdentityForm {
    /// The `name=value` pairs of a form body, in order, decoded (`+` is a space, `%XX` an octet of UTF-8).
    /// A pair without `=` has an empty value; empty pairs (`&&`) are skipped.
    static func decode(_ body: [UInt8]) -> [(name: String, value: String)] {
        self.decode(String(decoding: body, as: UTF8.self))
    }

    /// `decode(_:)` for a body given as text.
    static func decode(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (self.decodeComponent(pair[..<equals]), self.decodeComponent(pair[pair.index(after: equals)...]))
            }
            return (self.decodeComponent(pair), "")
        }
    }

    /// One decoded component: `+` becomes a space, then percent-decoding (left as it is if that fails).
    static func decodeComponent(_ component: some StringProtocol) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// A form body for `pairs`: every byte but the unreserved set (`A-Z a-z 0-9 - . _ ~`) percent-encoded, spaces
    /// as `+` (what an OAuth client sends).
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(self.encodeComponent($0.0))=\(self.encodeComponent($0.1))" }.joined(separator: "&")
    }

    /// One encoded component (see `encode(_:)`).
    static func encodeComponent(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += byte < 16 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return out
    }
}
