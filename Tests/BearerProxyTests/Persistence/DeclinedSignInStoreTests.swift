import Foundation
import Testing

@testable import BearerSignIn
@testable import BearerTokens

/// The decline `serve` notes per authorization server in the state directory (#25 item 2), under the cache's rules:
/// 0600, nothing but the issuer and a time, a corrupt file set aside and counted as none, and a time too far ahead —
/// a clock set back since, or a file written by someone else — cut to the back-off from now (#17).
@Suite("State directory: declined sign-ins per authorization server")
struct DeclinedSignInStoreTests {
    let issuer = "https://id.example.com/tenant"
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let backOff: TimeInterval = 300

    /// Runs `body` with a fresh state directory and its store.
    static func withStore(_ body: (StoreScratchDirectory, DiscoveredSignInStore) throws -> Void) throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try body(scratch, DiscoveredSignInStore(directory: scratch.state))
    }

    /// The one decline file in `scratch` (after one was noted).
    static func recordFile(_ scratch: StoreScratchDirectory) throws -> String {
        let names = scratch.entries().filter { $0.hasPrefix("discovered-declined-") && $0.hasSuffix(".json") }
        #expect(names.count == 1, "\(scratch.entries())")
        return scratch.state.path + "/" + (try #require(names.first))
    }

    @Test("noted, read back until it ends, 0600 with the issuer and a time only; for no other issuer; cleared")
    func notedAndCleared() throws {
        try Self.withStore { scratch, store in
            try store.noteDeclined(issuer: issuer, until: now + backOff)
            #expect(try store.declinedUntil(issuer: issuer, now: now, longest: backOff) == now + backOff)
            #expect(try store.declinedUntil(issuer: issuer, now: now + backOff, longest: backOff) == nil)
            #expect(try store.declinedUntil(issuer: "https://other.example.com", now: now, longest: backOff) == nil)
            let file = try Self.recordFile(scratch)
            #expect(try StoreScratchDirectory.mode(file) == 0o600)
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(Set((object as? [String: Any])?.keys.map { $0 } ?? []) == ["issuer", "until"])
            try store.clearDeclined(issuer: "https://other.example.com")
            #expect(FileManager.default.fileExists(atPath: file))
            try store.clearDeclined(issuer: issuer)
            #expect(!FileManager.default.fileExists(atPath: file))
            #expect(try store.declinedUntil(issuer: issuer, now: now, longest: backOff) == nil)
        }
    }

    @Test(
        "a decline further ahead than the back-off holds for the back-off from now, and no longer, however often read")
    func tooFarAheadIsCut() throws {
        try Self.withStore { _, store in
            try store.noteDeclined(issuer: issuer, until: now + 365 * 86_400)
            #expect(try store.declinedUntil(issuer: issuer, now: now, longest: backOff) == now + backOff)
            #expect(try store.declinedUntil(issuer: issuer, now: now + 200, longest: backOff) == now + backOff)
            #expect(try store.declinedUntil(issuer: issuer, now: now + backOff, longest: backOff) == nil)
        }
    }

    @Test("a clock set back after a decline was noted holds the server back for the back-off from the new now")
    func clockSetBack() throws {
        try Self.withStore { _, store in
            try SignInBackOff(store: store, length: backOff, now: { [now] in now }).declined(issuer: issuer)
            let dayBefore = now - 86_400
            let declines = SignInBackOff(store: store, length: backOff, now: { dayBefore })
            #expect(declines.until(issuer: issuer) == dayBefore + backOff)
        }
    }

    @Test("a corrupt decline file is set aside and counts as none, without a crash; a new decline is noted after it")
    func corruptFileSetAside() throws {
        try Self.withStore { scratch, store in
            try store.noteDeclined(issuer: issuer, until: now + backOff)
            let file = try Self.recordFile(scratch)
            try Data("{ \"issuer\": ".utf8).write(to: URL(fileURLWithPath: file))
            let declines = SignInBackOff(store: store, length: backOff, now: { [now] in now })
            #expect(declines.until(issuer: issuer) == nil)
            #expect(!FileManager.default.fileExists(atPath: file))
            #expect(
                scratch.entries().contains { $0.hasPrefix("discovered-declined-") && $0.contains(".json.corrupt-") })
            try declines.declined(issuer: issuer)
            #expect(declines.until(issuer: issuer) == now + backOff)
        }
    }
}
