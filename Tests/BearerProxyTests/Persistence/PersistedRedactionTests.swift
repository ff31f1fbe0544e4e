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
        // The state directory's parent is a regular file: every operation fails (even for root), and says where.
        let blocker = scratch.root + "/not-a-directory"
        try Data(StoreSamples.refreshToken.utf8).write(to: URL(fileURLWithPath: blocker))
        let store = TokenStore(directory: StateDirectory(path: blocker + "/state"), accountKey: "account")
        let failures: [() throws -> Void] = [
            { _ = try store.load() },
            { try store.update { $0 = StoreSamples.account } },
            { try store.remove() },
        ]
        for operation in failures {
            do {
                try operation()
                Issue.record("expected a failure")
            } catch {
                for secret in StoreSamples.secrets { #expect(!"\(error)".contains(secret)) }
                #expect("\(error)".contains(blocker), "\(error)")
            }
        }
    }
}
