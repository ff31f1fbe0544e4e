import Foundation
import Testing

@testable import BearerCodec

/// The data plane's own codec on the requests of real clients (issue #24 condition 4), ahead of its wiring into the
/// proxy: every request of every capture in `Tests/BearerProxyTests/Fixtures/real-clients/` is accepted, with the
/// method and target the capture's recorder listed, and framed so that the next request starts where it ends. (The
/// replay through the proxy, `RealClientDifferentialTests`, holds the whole data plane to the same corpus.)
@Suite("BearerCodec: the requests of real clients")
struct RealClientCodecTests {
    /// One captured connection, and the method and target of each request in it.
    struct Capture: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let requests: [String]

        var testDescription: String { name }
    }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("BearerProxyTests/Fixtures/real-clients")

    static let captures: [Capture] = {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path),
            let listing = try? String(contentsOf: folder.appendingPathComponent("requests.txt"), encoding: .isoLatin1)
        else { return [] }
        var listed: [String: [String]] = [:]
        for line in listing.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { listed[parts[0], default: []].append(parts[1]) }
        }
        return files.filter { $0.hasSuffix(".http") }.sorted().compactMap { file in
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(file)) else { return nil }
            return Capture(name: String(file.dropLast(5)), bytes: Array(data), requests: listed[file] ?? [])
        }
    }()

    @Test("the corpus is there")
    func corpusIsThere() {
        #expect(Self.captures.count >= 30, "\(Self.folder.path)")
        #expect(Self.captures.allSatisfy { !$0.requests.isEmpty })
    }

    @Test("every request is accepted and framed as the recorder framed it", arguments: captures)
    func everyRequestAccepted(capture: Capture) throws {
        var rest = capture.bytes[...]
        var upgraded = false
        for listed in capture.requests {
            let bytes = Array(rest)
            let head = try #require(
                try bytes.parseRequest().get(), "\(capture.name): the head of \(listed) is incomplete")
            let requestLine =
                String(decoding: bytes[head.method], as: UTF8.self) + " "
                + String(decoding: bytes[head.target], as: UTF8.self)
            #expect(requestLine == listed, "\(capture.name)")
            var consumed = head.length
            switch head.framing {
            case .none:
                break
            case .length(let length):
                #expect(bytes.count >= consumed + length, "\(capture.name): \(listed) ends early")
                consumed += length
            case .chunked:
                var chunked = ChunkedBody()
                let runs = try Array(bytes[consumed...]).readChunks(&chunked).get()
                #expect(chunked.isComplete, "\(capture.name): \(listed)'s chunked body does not end")
                consumed += runs.map(\.bytes.count).reduce(0, +)
            case .untilClose:
                Issue.record("\(capture.name): \(listed): a request body delimited by the close")
            }
            rest = rest.dropFirst(consumed)
            // After a WebSocket handshake come the client's frames, not HTTP.
            let headText = String(decoding: bytes[..<head.length], as: UTF8.self).lowercased()
            upgraded = headText.contains("\r\nupgrade: websocket\r\n")
            if upgraded { break }
        }
        #expect(upgraded || rest.isEmpty, "\(capture.name): \(rest.count) byte(s) after the listed requests")
    }
}
