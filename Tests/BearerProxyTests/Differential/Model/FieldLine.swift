/// One field line, `name: value`, as a reference parser read it. Both are Latin-1 strings: one character per byte,
/// so that a byte outside ASCII (obs-text, RFC 9110 §5.5) is compared as the byte it was, whatever its encoding.
struct FieldLine: Sendable, Hashable, Decodable, CustomStringConvertible {
    var name: String
    var value: String

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `[name, value]`, as the reference programs print it.
    init(from decoder: any Decoder) throws {
        var pair = try decoder.unkeyedContainer()
        name = try pair.decode(String.self)
        value = try pair.decode(String.self)
    }

    var description: String { "\(name): \(value)" }

    /// The line as it is compared: the name in lower case (RFC 9110 §5.1: names are case-insensitive) and the value
    /// without the optional whitespace around it (RFC 9112 §5: OWS is not part of the value; llhttp keeps trailing
    /// whitespace, h11 and net/textproto drop it).
    ///
    /// `Transfer-Encoding` values are compared in lower case too: transfer codings are case-insensitive (RFC 9112
    /// §7), and h11 reports them lowered.
    var normalized: FieldLine {
        let name = Latin1.lowercased(name)
        let value = value.trimmingWhitespace
        return FieldLine(name: name, value: name == "transfer-encoding" ? Latin1.lowercased(value) : value)
    }
}
