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

/// ``SessionAdoption``, the one rule for whether the token cache file's account replaces memory's (#22 item 3), and
/// what ``AccountSession`` and the file's generation counter do with it.
@Suite("Which refresh token wins: memory's or the token cache file's")
struct SessionAdoptionTests {
    typealias Snapshot = AccountSession.Snapshot

    static let alice = AccountIdentity(name: "Alice", username: "alice@contoso.com")
    static let bob = AccountIdentity(name: "Bob", username: "bob@contoso.com")

    static func memory(_ token: String?, _ generation: Int, _ durability: AccountSession.Durability)
        -> AccountSession.Record
    {
        AccountSession.Record(
            snapshot: Snapshot(refreshToken: token, identity: alice), generation: generation, durability: durability)
    }

    static func file(_ token: String?, _ generation: Int, identity: AccountIdentity? = alice) -> StoredSession {
        .account(Snapshot(refreshToken: token, identity: identity), generation: generation)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var memory: AccountSession.Record
        var file: StoredSession
        var expected: SessionAdoption
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // A refresh token from the environment was never in a file.
        Case(name: "configured, no file: keep", memory: memory("env", 0, .configured), file: .noFile, expected: .keep),
        Case(
            name: "configured, another process rotated it: adopt", memory: memory("env", 0, .configured),
            file: file("rt2", 1), expected: .adopt),
        Case(
            name: "configured, a file with tokens only: keep", memory: memory("env", 0, .configured),
            file: file(nil, 0, identity: nil), expected: .keep),
        Case(
            name: "configured, the file holds it: same", memory: memory("env", 0, .configured), file: file("env", 0),
            expected: .same),
        // The file held memory's token: a different one was written after it.
        Case(
            name: "saved, file deleted (logout): adopt", memory: memory("a", 3, .saved), file: .noFile, expected: .adopt
        ),
        Case(
            name: "saved, rotated elsewhere: adopt", memory: memory("a", 3, .saved), file: file("b", 4),
            expected: .adopt),
        Case(
            name: "saved, written by a build without generations: adopt", memory: memory("a", 3, .saved),
            file: file("b", 0), expected: .adopt),
        Case(
            name: "saved, a sign-in as someone else with the same token: adopt", memory: memory("a", 3, .saved),
            file: file("a", 3, identity: bob), expected: .adopt),
        Case(name: "saved, same: same", memory: memory("a", 3, .saved), file: file("a", 3), expected: .same),
        // The bug: a rotated token whose write failed, and the retired one still in the file.
        Case(
            name: "unsaved, the file holds the token it replaced: keep", memory: memory("b", 4, .unsaved),
            file: file("a", 3), expected: .keep),
        Case(
            name: "unsaved, an older build rewrote the file: keep", memory: memory("b", 4, .unsaved),
            file: file("a", 0), expected: .keep),
        Case(
            name: "unsaved, a login elsewhere wrote the same generation: adopt", memory: memory("b", 4, .unsaved),
            file: file("c", 4), expected: .adopt),
        Case(
            name: "unsaved, a newer generation: adopt", memory: memory("b", 4, .unsaved), file: file("c", 5),
            expected: .adopt),
        Case(
            name: "unsaved, logout elsewhere: adopt, never resurrect it", memory: memory("b", 4, .unsaved),
            file: .noFile, expected: .adopt),
        Case(
            name: "unsaved, the write landed after all: same", memory: memory("b", 4, .unsaved), file: file("b", 4),
            expected: .same),
        // A read that failed says nothing.
        Case(
            name: "configured, unreadable: keep", memory: memory("env", 0, .configured), file: .unreadable,
            expected: .keep),
        Case(name: "saved, unreadable: keep", memory: memory("a", 3, .saved), file: .unreadable, expected: .keep),
        Case(name: "unsaved, unreadable: keep", memory: memory("b", 4, .unsaved), file: .unreadable, expected: .keep),
        // A corrupt file, set aside, is no sign-out either (it used to read as "no file").
        Case(
            name: "configured, set aside: keep", memory: memory("env", 0, .configured), file: .setAside,
            expected: .keep),
        Case(name: "saved, set aside: keep", memory: memory("a", 3, .saved), file: .setAside, expected: .keep),
        Case(name: "unsaved, set aside: keep", memory: memory("b", 4, .unsaved), file: .setAside, expected: .keep),
    ]

    @Test("the rule", arguments: cases)
    func rule(_ row: Case) {
        #expect(SessionAdoption.decide(memory: row.memory, file: row.file) == row.expected)
    }

    @Test("a rotation is unsaved one generation up; the file's older token cannot replace it; a write saves it")
    func rotationLifecycle() {
        let session = AccountSession()
        session.restore(Snapshot(refreshToken: "a", identity: Self.alice), generation: 3, durability: .saved)
        session.rotated(refreshToken: "b", identity: nil)
        #expect(session.record == Self.memory("b", 4, .unsaved))
        #expect(session.reconcile(with: Self.file("a", 3)) == .keep)
        #expect(session.refreshToken == "b")
        session.saved(Snapshot(refreshToken: "b", identity: Self.alice), generation: 4)
        #expect(session.record == Self.memory("b", 4, .saved))
    }

    @Test("a write of a state that changed meanwhile leaves the newer one unsaved, above the generation written")
    func savedWhileChanged() {
        let session = AccountSession()
        session.restore(Snapshot(refreshToken: "a", identity: Self.alice), generation: 3, durability: .saved)
        session.rotated(refreshToken: "b", identity: nil)
        session.rotated(refreshToken: "c", identity: nil)
        session.saved(Snapshot(refreshToken: "b", identity: Self.alice), generation: 6)
        #expect(session.record == Self.memory("c", 7, .unsaved))
        #expect(session.reconcile(with: Self.file("b", 6)) == .keep)
    }

    @Test("adopting: a newer file's account becomes memory's, saved; a deleted file signs out and drops the write")
    func adoption() {
        let session = AccountSession()
        session.restore(Snapshot(refreshToken: "b", identity: Self.alice), generation: 4, durability: .unsaved)
        #expect(session.reconcile(with: Self.file("c", 5, identity: Self.bob)) == .adopt)
        #expect(session.record.snapshot == Snapshot(refreshToken: "c", identity: Self.bob))
        #expect(session.record.durability == .saved)
        session.rotated(refreshToken: "d", identity: nil)
        #expect(session.reconcile(with: .noFile) == .adopt)
        #expect(!session.isSignedIn)
        #expect(!session.isUnsaved)
    }

    @Test(
        "the generation written: one above the file's for a different token, never below memory's",
        arguments: [
            // (file token, file generation, memory token, memory generation, written)
            ("a", 3, "b", 4, 4), ("a", 7, "b", 4, 8), ("b", 4, "b", 4, 4), ("b", 9, "b", 4, 9), (nil, 0, "b", 1, 1),
        ] as [(String?, Int, String, Int, Int)])
    func generationWritten(
        _ fileToken: String?, _ fileGeneration: Int, _ token: String, _ generation: Int, _ written: Int
    ) {
        var stored: PersistedAccount? =
            fileToken == nil
            ? nil
            : PersistedAccount(
                flow: "refresh-token", refreshToken: fileToken, refreshTokenGeneration: fileGeneration,
                updatedAt: StoreSamples.now)
        let record = Self.memory(token, generation, .unsaved)
        #expect(TokenPersistence.put(record, into: &stored, flowName: "refresh-token") == written)
        #expect(stored?.refreshTokenGeneration == written)
        #expect(stored?.refreshToken == token)
    }

    @Test("a sign-out deletes the file's account")
    func signOutDeletes() {
        var stored: PersistedAccount? = PersistedAccount(
            flow: "refresh-token", refreshToken: "a", refreshTokenGeneration: 3, updatedAt: StoreSamples.now)
        let record = AccountSession.Record(snapshot: Snapshot(), generation: 4, durability: .unsaved)
        _ = TokenPersistence.put(record, into: &stored, flowName: "refresh-token")
        #expect(stored == nil)
    }

    @Test("the retry waits 1 s after a failure, doubling per failed retry up to 30 s")
    func retryDelays() {
        var unsaved = UnsavedChanges(firstFailure: "disk full", at: .seconds(100), on: StoreSamples.now)
        #expect(unsaved.nextAttempt == .seconds(101))
        // Other writes failing meanwhile do not push the retry back.
        unsaved.failedAgain("disk full", at: .seconds(100.5), retry: false)
        #expect(unsaved.nextAttempt == .seconds(101))
        var delays: [Duration] = []
        var now = Duration.seconds(101)
        for _ in 0..<7 {
            unsaved.failedAgain("disk full", at: now, retry: true)
            delays.append(unsaved.nextAttempt - now)
            now = unsaved.nextAttempt
        }
        #expect(delays == [2, 4, 8, 16, 30, 30, 30].map { .seconds($0) })
        #expect(unsaved.failedWrites == 9)
    }
}
