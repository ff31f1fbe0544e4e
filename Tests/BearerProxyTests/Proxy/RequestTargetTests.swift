import Testing

@testable import BearerProxy

@Suite("Request target: split raw, refuse escapes")
struct RequestTargetTests {
    @Test("path and query are split without decoding anything")
    func splitsRaw() throws {
        let target = try RequestTarget.parse("/graph/a%2Fb/c?x=%20&y")
        #expect(target.path == "/graph/a%2Fb/c")
        #expect(target.query == "x=%20&y")
        #expect(try RequestTarget.parse("/x?").query == "")
        #expect(try RequestTarget.parse("/x").query == nil)
    }

    @Test(
        "dot segments are refused in every spelling",
        arguments: [
            "/api/../admin", "/api/./x", "/api/..", "/..", "/api/%2e%2e/admin", "/api/%2E%2E/admin", "/api/.%2e/x",
            "/api/..%2fadmin", "/api/..%2Fadmin", "/api/..%5cadmin", "/api/..\\admin", "/api\\..\\admin",
            "/api/%2e%2e%2fadmin", "/api/%2e",
        ])
    func refusesDotSegments(_ uri: String) {
        #expect(throws: RequestTarget.Rejection.dotSegment) { try RequestTarget.parse(uri) }
    }

    @Test(
        "names that merely contain dots are fine", arguments: ["/api/...", "/api/.well-known/x", "/a..b", "/v1.0/me"])
    func allowsDotsInNames(_ uri: String) throws {
        #expect(try RequestTarget.parse(uri).path == uri[...])
    }

    @Test(
        "NUL and control characters are refused, raw or encoded", arguments: ["/a%00b", "/a%0ab", "/a%7F", "/a\u{01}"])
    func refusesControlCharacters(_ uri: String) {
        #expect(throws: RequestTarget.Rejection.forbiddenCharacter) { try RequestTarget.parse(uri) }
    }

    @Test("anything but origin-form is refused here", arguments: ["*", "http://evil.example/x", "x/y", ""])
    func refusesOtherForms(_ uri: String) {
        #expect(throws: RequestTarget.Rejection.notOriginForm) { try RequestTarget.parse(uri) }
    }
}
