import Testing

@testable import BearerConfiguration

/// A route's `upstreamProtocol`: read with its default, and refused with its JSON path and a suggestion.
@Suite struct UpstreamProtocolTests {
    typealias F = ConfigurationFixture

    @Test(arguments: [
        (nil, UpstreamProtocol.http1), ("http/1.1", .http1), ("h2", .h2), ("auto", .auto),
    ])
    func aRoutesUpstreamProtocolIsRead(_ text: String?, _ expected: UpstreamProtocol) throws {
        let member = text.map { #""upstreamProtocol": "\#($0)""# } ?? #""methods": ["GET"]"#
        let configuration = try F.parse(F.routeWith(member))
        #expect(configuration.routes.routes[0].upstreamProtocol == expected)
    }

    static let problemCases: [ProblemCase] = [
        ProblemCase(
            F.routeWith(#""upstreamProtocol": "h2c""#), "routes[0].upstreamProtocol",
            "must be one of \"http/1.1\", \"h2\", \"auto\" (did you mean \"h2\"?)"),
        ProblemCase(
            F.routeWith(#""upstreamProtocol": "http/2""#), "routes[0].upstreamProtocol",
            "must be one of \"http/1.1\", \"h2\", \"auto\""),
        ProblemCase(F.routeWith(#""upstreamProtocol": 2"#), "routes[0].upstreamProtocol", "must be a string"),
        ProblemCase(
            F.routeWith(#""upstreamProtocols": "h2""#), "routes[0].upstreamProtocols",
            "unknown key (did you mean \"upstreamProtocol\"?)"),
    ]

    @Test(arguments: problemCases)
    func reportsUpstreamProtocolProblem(_ problemCase: ProblemCase) {
        #expect(F.problems(problemCase.json, environment: problemCase.environment) == problemCase.expected)
    }
}
