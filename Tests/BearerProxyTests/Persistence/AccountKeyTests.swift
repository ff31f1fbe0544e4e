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

/// The account key names the cache file; it must be stable across releases and spellings of one account.
@Suite("Account key")
struct AccountKeyTests {
    @Test(
        "FNV-1a 128 matches the published test vectors",
        arguments: [
            ("", "6c62272e07bb014262b821756295c58d"),
            ("a", "d228cb696f1a8caf78912b704e4a8964"),
            ("foobar", "343e1662793c64bf6f0d3597ba446f18"),
        ])
    func vectors(input: String, expected: String) {
        #expect(AccountKey.hex(AccountKey.fnv1a128(Array(input.utf8))) == expected)
    }

    @Test("a key is 32 lowercase hex digits, and stays the same from release to release")
    func stable() {
        let key = AccountKey.make(
            flow: "device-code", authority: "https://login.microsoftonline.com/organizations",
            clientId: "00000000-0000-0000-0000-000000000000", username: nil)
        // Pinned (checked with an independent Python FNV-1a): a different value orphans every user's token cache.
        #expect(key == "dbb12271c59328e77cda71f363e55173")
        #expect(key.count == 32 && key.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(AccountKey.isValid(key))
    }

    @Test("spellings of the same account agree")
    func normalised() {
        let plain = AccountKey.make(
            flow: "native", authority: "https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
            clientId: "abcdef00-0000-0000-0000-000000000000", username: "ada@contoso.com")
        let spelled = AccountKey.make(
            flow: "native", authority: "https://Contoso.ciamlogin.com/contoso.onmicrosoft.com//",
            clientId: "ABCDEF00-0000-0000-0000-000000000000", username: "Ada@Contoso.com")
        #expect(plain == spelled)
    }

    @Test("any difference in what identifies the account gives another key")
    func distinct() {
        let keys = [
            AccountKey.make(flow: "dev", authority: nil, clientId: nil, username: nil),
            AccountKey.make(flow: "browser", authority: nil, clientId: nil, username: nil),
            AccountKey.make(flow: "dev", authority: "", clientId: nil, username: nil),
            AccountKey.make(flow: "dev", authority: nil, clientId: "", username: nil),
            AccountKey.make(flow: "dev", authority: nil, clientId: nil, username: ""),
            // Field boundaries cannot be moved: "a" + "bc" differs from "ab" + "c".
            AccountKey.make(flow: "dev", authority: "a", clientId: "bc", username: nil),
            AccountKey.make(flow: "dev", authority: "ab", clientId: "c", username: nil),
            AccountKey.make(flow: "dev", authority: "https://a/", clientId: "c", username: "u"),
            AccountKey.make(flow: "dev", authority: "https://b/", clientId: "c", username: "u"),
        ]
        #expect(Set(keys).count == keys.count)
    }

    @Test(
        "valid keys are 1 to 64 of [A-Za-z0-9_-]",
        arguments: [
            ("account", true), ("A-b_9", true), (String(repeating: "k", count: 64), true), ("", false),
            (String(repeating: "k", count: 65), false), ("a.b", false), ("a/b", false), ("..", false), ("é", false),
            ("a b", false),
        ])
    func validity(key: String, valid: Bool) {
        #expect(AccountKey.isValid(key) == valid)
    }
}
