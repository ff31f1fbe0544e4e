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

/// The token cache file: round trip, modes, update and remove (SPEC §7 "Persistence").
@Suite("Token store: reading and writing")
struct TokenStoreTests {
    @Test("an account written by update loads back equal, and update returns exactly what load returns")
    func roundTrip() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        let written = try store.update { $0 = StoreSamples.account }
        #expect(written == TokenFile.normalized(StoreSamples.account))
        #expect(try store.load() == .loaded(try #require(written)))
        // Another store on the same file (another process, in effect) sees the same.
        #expect(try scratch.store().load() == .loaded(try #require(written)))
    }

    @Test("normalising sorts scopes and keeps dates to the millisecond")
    func normalisation() throws {
        let original = StoreSamples.account
        let normalized = TokenFile.normalized(original)
        #expect(normalized.accessTokens[1].scopes == ["api://todo/ToDoList.Read", "api://todo/ToDoList.ReadWrite"])
        #expect(normalized.accessTokens[0].grantedScopes == ["User.Read", "openid", "profile"])
        for (before, after) in zip(original.accessTokens, normalized.accessTokens) {
            #expect(abs(before.expiresOn.timeIntervalSince(after.expiresOn)) < 0.001)
            #expect(abs(before.refreshOn.timeIntervalSince(after.refreshOn)) < 0.001)
        }
        #expect(TokenFile.normalized(normalized) == normalized)
    }

    @Test("no file loads as empty, without creating anything")
    func emptyWhenAbsent() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        #expect(try scratch.store().load() == .empty)
        #expect(scratch.store().signature() == nil)
        #expect(!FileManager.default.fileExists(atPath: scratch.state.path))
    }

    @Test("the file is 0600 and the directory 0700, created by the first update")
    func modes() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try store.update { $0 = StoreSamples.account }
        #expect(store.path == scratch.state.path + "/tokens-account.json")
        #expect(try StoreScratchDirectory.mode(store.path) == 0o600)
        #expect(try StoreScratchDirectory.mode(scratch.state.path) == 0o700)
    }

    @Test("a looser file or directory mode is tightened on load, not refused")
    func looseModesAreTightened() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try store.update { $0 = StoreSamples.account }
        #expect(chmod(store.path, 0o644) == 0)
        #expect(chmod(scratch.state.path, 0o755) == 0)
        #expect(try store.load() == .loaded(TokenFile.normalized(StoreSamples.account)))
        #expect(try StoreScratchDirectory.mode(store.path) == 0o600)
        #expect(try StoreScratchDirectory.mode(scratch.state.path) == 0o700)
    }

    @Test("update on an absent file sees nil; setting nil again writes nothing")
    func updateOnAbsentFile() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        var seen: PersistedAccount?? = .none
        let result = try store.update { account in
            seen = .some(account)
        }
        #expect(seen == .some(nil))
        #expect(result == nil)
        #expect(store.signature() == nil)
        #expect(try store.load() == .empty)
    }

    @Test("update changes the stored account in place")
    func updateModifies() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try store.update { $0 = StoreSamples.account }
        let updated = try store.update { account in
            account?.refreshToken = "RT-rotated"
            account?.accessTokens.removeFirst()
        }
        guard case .loaded(let loaded) = try store.load() else {
            Issue.record("expected the account")
            return
        }
        #expect(loaded == updated)
        #expect(loaded.refreshToken == "RT-rotated")
        #expect(loaded.accessTokens.map(\.value) == [StoreSamples.todoTokenValue])
    }

    @Test("an update that changes nothing does not rewrite the file, so pollers stay asleep")
    func unchangedUpdateWritesNothing() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try store.update { $0 = StoreSamples.account }
        let before = try #require(store.signature())
        try store.update { _ in }
        try store.update { $0 = StoreSamples.account }
        #expect(store.signature() == before)
        try store.update { $0?.refreshToken = "RT-rotated" }
        #expect(store.signature() != before)
    }

    @Test("setting the account to nil deletes the file; remove forgets it; both are fine when there is none")
    func deleting() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try store.update { $0 = StoreSamples.account }
        #expect(try store.update { $0 = nil } == nil)
        #expect(try store.load() == .empty)
        try store.update { $0 = StoreSamples.account }
        try store.remove()
        #expect(try store.load() == .empty)
        #expect(!FileManager.default.fileExists(atPath: store.path))
        try store.remove()
    }

    @Test("accounts with different keys live in different files")
    func accountsAreSeparate() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try scratch.store("one").update { $0 = StoreSamples.account }
        #expect(try scratch.store("two").load() == .empty)
        try scratch.store("two").remove()
        #expect(try scratch.store("one").load() == .loaded(TokenFile.normalized(StoreSamples.account)))
    }

    @Test("the file is JSON with \"version\": 1 first, then sorted keys, and ISO 8601 UTC dates with milliseconds")
    func fileFormat() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try store.update { $0 = StoreSamples.account }
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        let compact = text.filter { !$0.isWhitespace }
        #expect(compact.hasPrefix(#"{"version":1,"accessTokens":[{"#))
        #expect(compact.contains(#""flow":"refresh-token","identity":{"name":"AdaLovelace","objectID":"#))
        #expect(compact.contains(#""updatedAt":"2025-11-22T05:40:00.123Z""#))
        #expect(compact.contains(#""expiresOn":"2025-11-22T06:40:00.123Z""#))
        #expect(compact.contains(#""scopes":["api://todo/ToDoList.Read","api://todo/ToDoList.ReadWrite"]"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["version", "flow", "identity", "refreshToken", "accessTokens", "updatedAt"])
    }

    @Test("a file without optional fields omits them and loads back")
    func minimalAccount() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        let minimal = PersistedAccount(flow: "dev", updatedAt: StoreSamples.now)
        try store.update { $0 = minimal }
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(!text.contains("refreshToken") && !text.contains("identity"))
        #expect(try store.load() == .loaded(TokenFile.normalized(minimal)))
    }

    @Test("the signature changes when another store rewrites the file")
    func signatureNoticesRewrites() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let poller = scratch.store()
        try scratch.store().update { $0 = StoreSamples.account }
        let first = try #require(poller.signature())
        #expect(poller.signature() == first)
        try scratch.store().update { $0?.updatedAt = StoreSamples.now.addingTimeInterval(1) }
        #expect(poller.signature() != first)
    }

    @Test("temporary files left by a writer that died are removed by the next update; others are left alone")
    func abandonedTemporaryFiles() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try scratch.state.prepare()
        let abandoned = scratch.state.path + "/.tokens-account.json.99999.tmp"
        let unrelated = [".tokens-other.json.99999.tmp", ".tokens-account.json.x1.tmp", ".key.json.99999.tmp"]
        try Data("{\"version\": 1, \"flo".utf8).write(to: URL(fileURLWithPath: abandoned))
        for name in unrelated { try Data().write(to: URL(fileURLWithPath: scratch.state.path + "/" + name)) }
        try store.update { $0 = StoreSamples.account }
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(Set(unrelated).isSubset(of: scratch.entries()))
        #expect(try store.load() == .loaded(TokenFile.normalized(StoreSamples.account)))
    }
}
