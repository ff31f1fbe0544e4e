import NIOHTTP1

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// One page a fake protected resource or authorization server serves; `{origin}` in its headers and body becomes
/// `http://127.0.0.1:PORT` of the server answering, `{other}` the origin given to ``FakeDiscoveryServer/pages(_:other:)``.
struct FakeDiscoveryPage: Sendable {
    var status: Int = 200
    var headers: [(String, String)] = [("content-type", "application/json")]
    var body: String = ""
}

/// The fake protected resource and authorization server of the discovery tests: a ``FakeUpstream`` on
/// 127.0.0.1:0 answering each path from a table (404 for any other), so one server can play the resource, its
/// metadata and its authorization server, and a second one another origin.
enum FakeDiscoveryServer {
    static func pages(
        _ pages: [String: FakeDiscoveryPage], other: String = ""
    ) -> @Sendable (RequestHead) -> UpstreamBehaviour {
        { head in
            let origin = "http://" + (head.header("host") ?? "")
            func filled(_ text: String) -> String {
                text.replacingOccurrences(of: "{origin}", with: origin).replacingOccurrences(of: "{other}", with: other)
            }
            let path = String(head.uri.prefix { $0 != "?" })
            guard let page = pages[path] else { return .respond(status: 404, text: "no such page") }
            return .respond(
                status: page.status, headers: page.headers.map { ($0.0, filled($0.1)) }, text: filled(page.body))
        }
    }

    /// A 401 with this `WWW-Authenticate` value.
    static func challenge(_ value: String) -> FakeDiscoveryPage {
        FakeDiscoveryPage(status: 401, headers: [("www-authenticate", value)], body: "")
    }

    /// Authorization-server metadata for `issuer` with its endpoints under `{origin}` and PKCE `methods`.
    static func server(issuer: String, methods: String = #"["S256"]"#, registration: Bool = true) -> FakeDiscoveryPage {
        let registrationMember = registration ? #", "registration_endpoint": "{origin}/register""# : ""
        return FakeDiscoveryPage(
            body: #"{"issuer": "\#(issuer)", "authorization_endpoint": "{origin}/authorize", "#
                + #""token_endpoint": "{origin}/token", "code_challenge_methods_supported": \#(methods)"#
                + registrationMember + "}")
    }
}

/// A ``DiscoveryTransport`` without sockets, for the rules: the probe's answer and documents by URL.
struct MemoryTransport: DiscoveryTransport {
    var probeStatus = 401
    var challenge: String?
    var documents: [String: String] = [:]

    func probe(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, headers: HTTPHeaders) {
        var headers = HTTPHeaders()
        if let challenge { headers.add(name: "www-authenticate", value: challenge) }
        return (probeStatus, headers)
    }

    func fetch(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, body: [UInt8]) {
        guard let document = documents[url.text] else { return (404, []) }
        return (200, Array(document.utf8))
    }
}

/// A resolver answering from a table; a name not in it does not resolve.
struct TableResolver: HostResolver {
    var table: [String: [IPAddress]] = [:]

    func addresses(of host: String) async throws(DiscoveryError) -> [IPAddress] {
        guard let addresses = table[host] else { throw .hostNotFound(host: host) }
        return addresses
    }
}
