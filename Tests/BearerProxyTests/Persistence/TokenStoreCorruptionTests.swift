import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Unusable cache files are renamed aside — never deleted — and reported, and the store starts afresh.
@Suite("Token store: unusable files are set aside")
struct TokenStoreCorruptionTests {
    /// One kind of bad file: its bytes and the reason the store must give.
    struct BadFile: Sendable, CustomTestStringConvertible {
        var name: String
        var contents: String
        var reason: String
        var testDescription: String { name }
    }

    static let badFiles: [BadFile] = [
        BadFile(name: "garbage", contents: "\u{1}\u{2}not json at all", reason: "not valid JSON"),
        BadFile(name: "empty", contents: "", reason: "not valid JSON"),
        BadFile(
            name: "truncated JSON", contents: #"{"version": 1, "flow": "dev", "accessTokens": [{"scopes": ["#,
            reason: "not valid JSON"),
        BadFile(name: "not an object", contents: #"["version", 1]"#, reason: "not a JSON object"),
        BadFile(
            name: "no version", contents: #"{"flow": "dev", "accessTokens": [], "updatedAt": "2025-11-22T05:40:00Z"}"#,
            reason: #"no "version" field: not a bearer-proxy token cache"#),
        BadFile(name: "version as text", contents: #"{"version": "1"}"#, reason: #""version" is not a whole number"#),
        BadFile(
            name: "newer version", contents: #"{"version": 2, "shape": "new"}"#,
            reason: "written by a newer bearer-proxy (version 2)"),
        BadFile(name: "version 0", contents: #"{"version": 0}"#, reason: "unknown format version 0"),
        BadFile(
            name: "wrong shape",
            contents:
                #"{"version": 1, "flow": "dev", "accessTokens": [{"scopes": 7}], "updatedAt": "2025-11-22T05:40:00Z"}"#,
            reason: "wrong shape: unexpected type at $.accessTokens[0].scopes"),
        BadFile(
            name: "missing field",
            contents: #"{"version": 1, "accessTokens": [], "updatedAt": "2025-11-22T05:40:00Z"}"#,
            reason: #"wrong shape: "flow" missing at $"#),
        BadFile(
            name: "bad date", contents: #"{"version": 1, "flow": "dev", "accessTokens": [], "updatedAt": "yesterday"}"#,
            reason: "wrong shape: invalid value at $.updatedAt"),
    ]

    @Test("a bad file is set aside with its contents intact; the next load is empty", arguments: badFiles)
    func setAside(_ bad: BadFile) throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try scratch.state.prepare()
        try Data(bad.contents.utf8).write(to: URL(fileURLWithPath: store.path))
        guard case .setAside(let original, let movedTo, let reason) = try store.load() else {
            Issue.record("expected the file to be set aside")
            return
        }
        #expect(original == store.path)
        #expect(movedTo.hasPrefix(store.path + ".corrupt-"))
        #expect(reason == bad.reason)
        #expect(try Data(contentsOf: URL(fileURLWithPath: movedTo)) == Data(bad.contents.utf8))
        #expect(!FileManager.default.fileExists(atPath: store.path))
        #expect(try store.load() == .empty)
    }

    @Test("set-aside names carry a UTC timestamp, and a second set-aside in the same second keeps the first")
    func setAsideNeverOverwrites() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try scratch.state.prepare()
        var moved: [String] = []
        for contents in ["first", "second", "third"] {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: store.path))
            guard case .setAside(_, let movedTo, _) = try store.load() else {
                Issue.record("expected the file to be set aside")
                return
            }
            moved.append(movedTo)
        }
        #expect(Set(moved).count == 3)
        let contents = try moved.map { try String(contentsOfFile: $0, encoding: .utf8) }
        #expect(contents == ["first", "second", "third"])
        let stamp = String(moved[0].dropFirst((store.path + ".corrupt-").count))
        #expect(stamp.count == 16 && stamp.hasSuffix("Z") && Array(stamp)[8] == "T", "\(stamp)")
    }

    @Test("update over a bad file sets it aside, sees nil, and writes a fresh account")
    func updateOverBadFile() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try scratch.state.prepare()
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: store.path))
        var seen: PersistedAccount?? = .none
        try store.update { account in
            seen = .some(account)
            account = StoreSamples.account
        }
        #expect(seen == .some(nil))
        #expect(try store.load() == .loaded(TokenFile.normalized(StoreSamples.account)))
        let asides = scratch.entries().filter { $0.hasPrefix("tokens-account.json.corrupt-") }
        #expect(asides.count == 1)
        #expect(try String(contentsOfFile: scratch.state.path + "/" + asides[0], encoding: .utf8) == "garbage")
    }

    @Test("something other than a regular file in the file's place is set aside too")
    func notARegularFile() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        guard case .setAside(_, let movedTo, let reason) = try store.load() else {
            Issue.record("expected the directory to be set aside")
            return
        }
        #expect(reason == "not a regular file")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: movedTo, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test("reasons never quote the file's contents")
    func reasonsDoNotLeak() throws {
        let secret = "RT-secret-in-a-broken-file"
        let samples = [
            #"{"version": 1, "flow": "dev", "refreshToken": 5, "x": "\#(secret)"}"#,
            #"{"version": 1, "flow": "\#(secret)", "accessTokens": [], "updatedAt": "\#(secret)"}"#,
            "\(secret) {",
            #"{"version": 1, "flow": "dev", "accessTokens": [{"scopes": ["a"], "grantedScopes": ["a"], "value": "\#(secret)", "expiresOn": 1}], "updatedAt": "2025-11-22T05:40:00Z"}"#,
        ]
        for sample in samples {
            guard case .unusable(let reason) = TokenFile.decode(Data(sample.utf8)) else {
                Issue.record("expected \(sample.prefix(20))… to be unusable")
                continue
            }
            #expect(!reason.contains(secret), "\(reason)")
        }
    }
}
