/// Bytes as Latin-1 strings and back: the references print names, values and targets with one character per byte
/// (h11 decodes Latin-1, the Go program maps each byte to a rune), so any byte survives JSON and compares as itself.
enum Latin1 {
    static func string<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    /// The bytes of a Latin-1 string; a character past U+00FF (never printed by a reference) becomes `?`.
    static func bytes(_ string: String) -> [UInt8] {
        string.unicodeScalars.map { $0.value < 256 ? UInt8($0.value) : UInt8(ascii: "?") }
    }

    /// ASCII letters in lower case, every other byte as it is (RFC 9110 §5.1 compares names ASCII case-insensitively).
    static func lowercased(_ string: String) -> String {
        self.string(bytes(string).map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 })
    }
}
