/// The three independent HTTP/1.1 parsers a message is held to (issue #24 condition 2, SPEC §3).
enum Reference: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// NIOHTTP1's decoder (llhttp), in process: the parser of today's data plane.
    case nio
    /// Python's h11, `Tests/differential/h11/frame_stream.py`.
    case h11
    /// Go's net/http (`http.ReadRequest` / `http.ReadResponse`), `Tests/differential/go`.
    case go

    static func < (lhs: Reference, rhs: Reference) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    var description: String {
        switch self {
        case .nio: "NIOHTTP1"
        case .h11: "h11"
        case .go: "net/http"
        }
    }
}
