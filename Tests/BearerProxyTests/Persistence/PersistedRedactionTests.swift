import Foundation
import Testing

@testable import BearerProxy

/// Secrets in the persisted types never reach text meant for people (SPEC §9, house rule 6).
@Suite("Persisted account: secrets are redacted")
struct PersistedRedactionTests {
    static func renderings(of account: PersistedAccount) -> [String: String] {
        var dumped = ""
        dump(account, to: &dumped)
        var dumpedLoad = ""
        dump(TokenStoreLoad.loaded(account), to: &dumpedLoad)
        return [
            "description": account.description,
            "debugDescription": account.debugDescription,
            "String(describing:)": String(describing: account),
            "String(reflecting:)": String(reflecting: account),
            "interpolation": "\(account)",
            "dump": dumped,
            "token description": account.accessTokens.map(\.description).joined(),
            "token reflecting": account.accessTokens.map { String(reflecting: $0) }.joined(),
            "load describing": String(describing: TokenStoreLoad.loaded(account)),
            "load reflecting": String(reflecting: TokenStoreLoad.loaded(account)),
            "load dump": dumpedLoad,
        ]
    }

    @Test("no rendering of an account or its tokens contains the refresh token or a token value")
    func noSecretsInText() {
        for (name, text) in Self.renderings(of: StoreSamples.account) {
            for secret in StoreSamples.secrets {
                #expect(!text.contains(secret), "\(name) leaks a secret: \(text)")
            }
            #expect(text.contains("<redacted>"), "\(name): \(text)")
        }
    }

    @Test("what is not secret is still shown, for debugging")
    func usefulText() {
        let text = StoreSamples.account.description
        #expect(text.contains("refresh-token") && text.contains("ada@contoso.com"))
        #expect(text.contains("api://todo/ToDoList.Read") && text.contains("c1a1m5"))
        #expect(PersistedAccount(flow: "dev", updatedAt: StoreSamples.now).description.contains("refreshToken: none"))
    }

    @Test("errors about the file name the path, never the contents")
    func errorsDoNotLeak() throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let store = scratch.store()
        try store.update { $0 = StoreSamples.account }
        // A directory that cannot be entered: every operation fails, and says where.
        #expect(chmod(scratch.state.path, 0o000) == 0)
        defer { chmod(scratch.state.path, 0o700) }
        guard getuid() != 0 else { return }  // root ignores permissions; nothing fails
        do {
            _ = try store.load()
            Issue.record("expected the load to fail")
        } catch {
            for secret in StoreSamples.secrets { #expect(!"\(error)".contains(secret)) }
            #expect("\(error)".contains(scratch.state.path))
        }
    }
}
