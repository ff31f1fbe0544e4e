import Foundation
import Testing

/// One connection of a real client, captured as bytes (issue #24 condition 4): a file of `Fixtures/real-clients/`,
/// written by `Tests/differential/clients/capture.sh`, and the requests the capture's recorder framed in it.
struct RealClientCapture: Sendable, CustomTestStringConvertible {
    /// A request as the recorder listed it in `requests.txt` when it captured the connection.
    struct ListedRequest: Sendable, Hashable, CustomStringConvertible {
        let method: String
        let target: String

        var description: String { "\(method) \(target)" }
    }

    /// The file's name without `.http`: `<client>-<case>-<n>`.
    let name: String
    /// Everything the client sent on the connection, byte for byte.
    let bytes: [UInt8]
    /// The requests in it, in order, as the recorder framed them: an oracle independent of the three references.
    let requests: [ListedRequest]

    var testDescription: String { name }

    /// The capture as a stream of the differential harness, read in one piece.
    var input: DifferentialInput { DifferentialInput(family: "real client", name: name, bytes: bytes) }

    /// The bytes after the first head: after a WebSocket handshake, which has no body, the frames the client sent
    /// once it had the `101` (RFC 6455 §5).
    var bytesAfterFirstHead: Int {
        Self.headLength(bytes).map { bytes.count - $0 } ?? 0
    }

    /// The length of the head that `bytes` begin with, up to and including the empty line that ends it (RFC 9112
    /// §2.1), or nil if it has not ended.
    static func headLength(_ bytes: [UInt8]) -> Int? {
        let end: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
        guard bytes.count >= end.count else { return nil }
        return (0...(bytes.count - end.count)).first { bytes[$0..<$0 + end.count].elementsEqual(end) }.map {
            $0 + end.count
        }
    }

    /// `Fixtures/real-clients/` in the test bundle's copied `Fixtures` resource.
    static let folder: URL? = Bundle.module.url(forResource: "Fixtures", withExtension: nil)?
        .appendingPathComponent("real-clients")

    /// Every capture, in file-name order; empty if the folder cannot be read (a test checks that it is not).
    static let all: [RealClientCapture] = {
        guard let folder, let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path),
            let listing = try? Data(contentsOf: folder.appendingPathComponent("requests.txt"))
        else { return [] }
        // `file METHOD TARGET` per line, read as Latin-1: a target is compared byte for byte.
        var listed: [String: [ListedRequest]] = [:]
        for line in Latin1.string(listing).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count == 3 else { continue }
            listed[parts[0], default: []].append(ListedRequest(method: parts[1], target: parts[2]))
        }
        return files.filter { $0.hasSuffix(".http") }.sorted().compactMap { file in
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(file)) else { return nil }
            return RealClientCapture(
                name: String(file.dropLast(".http".count)), bytes: Array(data), requests: listed[file] ?? [])
        }
    }()
}
