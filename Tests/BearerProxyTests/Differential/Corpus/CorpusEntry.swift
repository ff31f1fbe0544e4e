import Testing

/// One seed of the differential corpus: a whole client stream, written as text with `\r\n` spelled out.
struct CorpusEntry: Sendable, CustomTestStringConvertible {
    /// The family of the smuggling classes (PortSwigger's, the HTTP Garden's), or `plain` / `pipelined`.
    let family: String
    let name: String
    /// The stream; `{HOST}` becomes the listener's `host:port` and every target is under the proxy's `/api` route.
    let text: String
    /// Valid, unambiguous HTTP/1.1 that all three references must accept and frame alike.
    var mustAgree = false

    var testDescription: String { "\(family): \(name)" }

    /// The stream's bytes, for a listener at `host`.
    func input(host: String = "127.0.0.1:8080") -> DifferentialInput {
        DifferentialInput(family: family, name: name, bytes: Latin1.bytes(text.replacing("{HOST}", with: host)))
    }
}
