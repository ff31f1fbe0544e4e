import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// #23 item 4: one table gives each header field its rules, and every check reads them from it. These tests walk the
/// table row by row and check each rule where it applies — the forwarding both ways, the guard, method overrides and
/// the configuration — so that a rule added to the table is enforced everywhere, and a row cannot say what no check
/// does.
@Suite("Header policy: one table, every rule enforced where it applies")
struct HeaderPolicyTests {
    typealias Rules = HeaderPolicy.Rules

    /// Every row, and a field of each prefix row.
    static let fields: [(name: String, rules: Rules)] =
        HeaderPolicy.entries.map { ($0.name.description, $0.rules) }
        + HeaderPolicy.prefixEntries.map { ($0.name.description + "for", $0.rules) }

    /// A field the proxy treats like any other.
    static let ordinary = "x-tenant"

    /// Every row, and the ordinary field.
    static let cases: [(name: String, rules: Rules)] = fields + [(ordinary, Rules())]

    let binding: RouteBinding

    init() throws {
        binding = try RouteBinding(
            TestConfigurations.route(
                #"{ "prefix": "/api", "upstream": "https://api.example.com/v1", "scopes": ["api://a/R"] }"#),
            timeouts: ProxyTimeouts()
        ) { try UpstreamTLS(caFile: $0, version: $1) }
    }

    @Test("a field is copied up to the upstream exactly when its row does not keep it back")
    func forwardedUp() throws {
        // The codec refuses a second Host, and a framing field with a value it cannot frame: not forwarding rules.
        for (name, rules) in Self.cases where !["host", "content-length", "transfer-encoding"].contains(name) {
            let client = HTTPRequestHead(
                version: .http1_1, method: .GET, uri: "/api/x",
                headers: ["Host": "localhost", name: "client-value-of-\(name)"])
            let head = try Forwarding.upstreamRequest(
                client: client, binding: binding, remainder: "/x", query: nil, authorization: "Bearer T",
                requestID: "rid", clientAddress: nil)
            let copied = head.headers.contains { $0.value == "client-value-of-\(name)" }
            #expect(copied == rules.isDisjoint(with: .notForwardedUp), "\(name) (\(rules))")
        }
    }

    @Test("a field is copied down to the client exactly when its row does not keep it back")
    func forwardedDown() throws {
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/api/x")
        // The codec refuses a second Content-Length and any coding but chunked: not forwarding rules.
        for (name, rules) in Self.cases where name != "transfer-encoding" && name != "content-length" {
            let upstream = try UpstreamResponse.parsing(
                "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\(name): upstream-value-of-\(name)\r\n\r\n")
            let head = try Forwarding.clientResponse(
                upstream: upstream, request: request, binding: binding, requestID: "rid", keepAlive: true
            ).head
            let copied = head.headers.contains { $0.value == "upstream-value-of-\(name)" }
            #expect(copied == rules.isDisjoint(with: .notForwardedDown), "\(name) (\(rules))")
        }
    }

    @Test("Connection may name a field exactly when its row allows it; the named field is dropped")
    func namedInConnection() {
        let check = RequestGuard(policy: SafetyPolicy())
        for (name, rules) in Self.cases {
            let head = HTTPRequestHead(
                version: .http1_1, method: .GET, uri: "/api/x", headers: ["Host": "localhost", "Connection": name])
            // The codec refuses naming the framing fields, Host and Authorization; the guard the rest of the rows.
            let refused: Bool
            if let decision = try? check.check(head) {
                if case .refuse(.badRequest(let detail)) = decision, detail.hasPrefix("Connection may not name") {
                    refused = true
                } else {
                    refused = false
                }
            } else {
                refused = true
            }
            #expect(refused == rules.contains(.refusedInConnection), "Connection: \(name) (\(rules))")
        }
    }

    @Test("a field spelled with _ for - is refused exactly when its row says so")
    func underscoreSpelling() throws {
        let check = RequestGuard(policy: SafetyPolicy())
        for (name, rules) in Self.cases where name.contains("-") {
            let spelled = name.replacing("-", with: "_").uppercased()
            let head = HTTPRequestHead(
                version: .http1_1, method: .GET, uri: "/api/x", headers: ["Host": "localhost", spelled: "v"])
            let refused: Bool
            if case .refuse(.badRequest(let detail)) = try check.check(head), detail.contains("imitates") {
                refused = true
            } else {
                refused = false
            }
            #expect(refused == rules.contains(.refusedWithUnderscore), "\(spelled) (\(rules))")
        }
    }

    @Test("a field decided once is refused when repeated")
    func decidedOnce() throws {
        let check = RequestGuard(policy: SafetyPolicy())
        let rows = Self.fields.filter { $0.rules.contains(.decidedOnce) }
        #expect(rows.count == 4)
        for (name, _) in rows {
            let head = HTTPRequestHead(
                version: .http1_1, method: .OPTIONS, uri: "/api/x",
                headers: HTTPHeaders([("Host", "localhost"), (name, "GET"), (name, "GET")]))
            guard case .refuse(.badRequest(let detail)) = try check.check(head) else {
                Issue.record("\(name) twice was not refused")
                continue
            }
            #expect(detail.contains("more than one"), "\(name)")
        }
    }

    @Test("a method override row is held to the route's methods; other fields are not read as one")
    func methodOverrides() {
        for (name, rules) in Self.cases {
            // A framing field whose value is a method is refused by the codec before any check: never an override.
            let asked = (try? MethodOverride.forbidden(headers: [name: "DELETE"], query: nil, allowed: ["GET"])) ?? nil
            #expect((asked == "DELETE") == rules.contains(.methodOverride), "\(name) (\(rules))")
        }
    }

    @Test("a route may set or remove a field exactly when the proxy neither writes it nor drops it as hop-by-hop")
    func routeReservations() {
        for (name, rules) in Self.cases {
            let reserved = HeaderRules.reservation(of: name.uppercased()) != nil
            #expect(reserved == !rules.isDisjoint(with: Rules([.hopByHop, .setByProxy])), "\(name) (\(rules))")
        }
    }

    @Test("the lookup is case-insensitive and exact: no row matches a longer or shorter name")
    func lookup() {
        #expect(HeaderPolicy.rules(of: "Proxy-Authorization").contains(.hopByHop))
        #expect(HeaderPolicy.rules(of: "X-FORWARDED-PROTO").contains(.droppedFromRequest))
        #expect(HeaderPolicy.rules(of: "connections").isEmpty)
        #expect(HeaderPolicy.rules(of: "hos").isEmpty)
        #expect(HeaderPolicy.rules(of: "x-forwarded").isEmpty)
        #expect(HeaderPolicy.rules(of: String(repeating: "x", count: 200)).isEmpty)
        // Every row is refused with `_`: a field treated specially has no second spelling that is not.
        #expect(HeaderPolicy.entries.allSatisfy { $0.rules.contains(.refusedWithUnderscore) })
    }
}
