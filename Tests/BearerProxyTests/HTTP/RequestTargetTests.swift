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
            // Path parameters, set aside by Tomcat and Spring before they read the segment.
            "/api/..;/admin", "/api/.;/x", "/api/..;a=b/x", "/api/..%3B/admin", "/api/..;%2fadmin",
            // Encoded twice or three times, for an upstream that decodes more than once.
            "/api/%252e%252e/admin", "/api/%252E%252E%252Fadmin", "/api/..%255cadmin", "/api/%25252e%25252e/x",
            // Compatibility characters that NFKC turns into dots and slashes (fullwidth, one-dot leader).
            "/api/%EF%BC%8E%EF%BC%8E/admin", "/api/..%EF%BC%8Fadmin", "/api/\u{FF0E}\u{FF0E}/x",
            "/api/\u{2024}\u{2024}",
            "/api/%ef%b9%92.%ef%bc%bcadmin",
            // Trailing spaces, which Windows drops.
            "/api/.. /admin", "/api/..%20%20/x", "/api/.%20",
        ])
    func refusesDotSegments(_ uri: String) {
        #expect(throws: RequestTarget.Rejection.dotSegment) { try RequestTarget.parse(uri) }
    }

    @Test(
        "encodings that only a lenient decoder reads as a dot or a slash are refused",
        arguments: [
            "/api/%2525252e%2525252e/x", "/api/%c0%ae%c0%ae/x",
            "/api/%C1%9C", "/api/%e0%80%ae", "/api/%f0%80%80%ae", "/api/%25u002e",
        ])
    func refusesAmbiguousEncodings(_ uri: String) {
        #expect(throws: RequestTarget.Rejection.ambiguousEncoding) { try RequestTarget.parse(uri) }
    }

    @Test(
        "names that merely contain dots, parameters, spaces or encoded percent signs are fine",
        arguments: [
            "/api/...", "/api/.well-known/x", "/a..b", "/v1.0/me", "/api/items;v=1", "/api/a;b/..c", "/api/. x",
            "/api/ ..", "/api/100%25", "/api/%2541", "/api/caf%C3%A9", "/api/%e2%82%ac",
            "/api/\u{FF0E}x", "/api/%EF%BC%8Ejson", "/api/x?q=%41%42&r=%2525",
        ])
    func allowsDotsInNames(_ uri: String) throws {
        #expect(try RequestTarget.parse(uri).path == uri.prefix { $0 != "?" })
    }

    @Test(
        "a % without two hexadecimal digits after it is refused, in the path and in the query (#28)",
        arguments: [
            "/api/50%", "/api/%zz", "/api/%4", "/api/%4g", "/api/%g4", "/api/%%41", "/api/%-1", "/api/% 20",
            "/api/x?q=%zz", "/api/x?q=%", "/api/x?%4", "/api/x?a=1&b=%G0", "/%", "/api/%\u{E9}",
            // IIS's %u (CVE-2000-0884): once refused as ambiguous, now first as malformed; %25u stays ambiguous.
            "/api/%u002e%u002e/x", "/api/%U002F",
        ])
    func refusesMalformedEscapes(_ uri: String) {
        #expect(throws: RequestTarget.Rejection.malformedPercentEncoding) { try RequestTarget.parse(uri) }
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

    @Test(
        "a configured path is refused for RFC 3986's dot segments: one or two dots, raw or %2E in any case",
        arguments: ["/.", "/..", "/a/./b", "/a/../b", "/a/%2e", "/a/%2E%2e/b", "/a/.%2E", "/a/%2e./b", "..", "/a/../"])
    func refusesURIDotSegments(_ path: String) {
        #expect(throws: RequestTarget.Rejection.dotSegment) {
            try RequestTarget.checkDotSegments(path[...], .uriSyntax)
        }
    }

    @Test(
        "a configured path may hold what only a lenient server reads as a dot segment; a client's target may not",
        arguments: [
            "/a/...", "/a/%2e%2e%2e", "/v1.0", "/a/..;x", "/a/%252e%252e", "/a/..%2Fb", "/a/..%5Cb", "/a/.%2", "/a/%2",
            "/a/%2f", "/a/%2e%2", "/", "",
        ])
    func allowsWhatOnlyLenientServersReadAsDots(_ path: String) throws {
        try RequestTarget.checkDotSegments(path[...], .uriSyntax)
        let lenient = ["/a/..;x", "/a/%252e%252e", "/a/..%2Fb", "/a/..%5Cb"]
        if lenient.contains(path) {
            #expect(throws: RequestTarget.Rejection.dotSegment) {
                try RequestTarget.checkDotSegments(path[...], .everySpelling)
            }
        }
    }
}
