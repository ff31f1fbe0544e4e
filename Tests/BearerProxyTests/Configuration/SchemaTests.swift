import Foundation
import Subprocess
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

/// docs/routes.schema.json says what the reader says: every object has the reader's keys and every choice its
/// values, and an independent validator (Python's jsonschema, run by Tests/python/validate_schema.py) agrees with
/// the reader on the shipped file, the documented examples, the problem tables and thousands of variations.
@Suite(.ownThread) struct SchemaTests {
    typealias F = ConfigurationFixture

    static let schemaFile = ShippedRoutesTests.repositoryRoot.appendingPathComponent("docs/routes.schema.json")
    static let script = ShippedRoutesTests.repositoryRoot.appendingPathComponent("Tests/python/validate_schema.py")

    @Test func everyObjectHasExactlyTheReaderKeys() throws {
        let schema = try Document.load()
        let route = try schema.node(schema.root, "properties", "routes", "items")
        try schema.expectClosed(schema.root, ConfigurationKeys.topLevel, "the document")
        try schema.expectClosed(schema.node(schema.root, "properties", "tls"), ConfigurationKeys.tls, "tls")
        try schema.expectClosed(route, ConfigurationKeys.route, "a route")
        try schema.expectClosed(schema.node(route, "properties", "tls"), ConfigurationKeys.tls, "a route's tls")
        try schema.expectClosed(schema.node(route, "properties", "headers"), ConfigurationKeys.headers, "headers")
        try schema.expectClosed(
            schema.node(route, "properties", "discovery"), ConfigurationKeys.discovery, "a route's discovery")

        let accounts = try schema.accountsByFlow()
        #expect(Set(accounts.keys) == Set(AccountFlow.allCases), "one account branch per flow")
        for flow in AccountFlow.allCases {
            guard let account = accounts[flow] else { continue }
            try schema.expectClosed(account, ConfigurationKeys.account(for: flow), "account (\(flow.rawValue))")
        }
        let clientCredentials = try #require(accounts[.clientCredentials])
        try schema.expectClosed(
            schema.node(clientCredentials, "properties", "certificate"), ConfigurationKeys.certificate,
            "account.certificate")
        try schema.expectClosed(
            schema.node(clientCredentials, "properties", "clientAssertion"), ConfigurationKeys.clientAssertion,
            "account.clientAssertion")
    }

    @Test func everyChoiceHasExactlyTheReaderValues() throws {
        let schema = try Document.load()
        let route = try schema.node(schema.root, "properties", "routes", "items")
        let accounts = try schema.accountsByFlow()
        let native = try #require(accounts[.native])
        let browser = try #require(accounts[.browser])
        let clientCredentials = try #require(accounts[.clientCredentials])
        let firebase = try #require(accounts[.firebase])
        let managedIdentity = try #require(accounts[.managedIdentity])
        let certificate = try schema.node(clientCredentials, "properties", "certificate")

        let choices: [(node: [String: Any], values: Set<String>, name: String)] = [
            (
                try schema.node(schema.root, "properties", "account", "properties", "flow"), raw(AccountFlow.self),
                "flow"
            ),
            (try schema.node(native, "properties", "challenge"), raw(NativeAccount.Challenge.self), "challenge"),
            (try schema.node(browser, "properties", "prompt"), raw(SignInPrompt.self), "prompt (browser)"),
            (try schema.node(firebase, "properties", "prompt"), raw(SignInPrompt.self), "prompt (firebase)"),
            (
                try schema.node(clientCredentials, "properties", "clientAuthentication"),
                raw(ClientCredentialsAccount.SecretMethod.self), "clientAuthentication"
            ),
            (
                try schema.node(certificate, "properties", "algorithm"),
                raw(ClientCredentialsAccount.AssertionAlgorithm.self), "certificate.algorithm"
            ),
            (try schema.node(firebase, "properties", "provider"), raw(FirebaseAccount.ProviderName.self), "provider"),
            (
                try schema.node(managedIdentity, "properties", "protocol"),
                raw(ManagedIdentityAccount.EndpointProtocol.self), "protocol"
            ),
            (try schema.node(route, "properties", "auth"), raw(ConfigurationReader.AuthKind.self), "auth"),
            (try schema.node(route, "properties", "token"), raw(ConfigurationReader.TokenKind.self), "token"),
        ]
        for choice in choices {
            let values = Set(choice.node["enum"] as? [String] ?? [])
            #expect(values == choice.values, "\(choice.name): the schema allows \(values.sorted())")
        }
    }

    /// Every key has sample values for the variations below, so a new key cannot go untested.
    @Test func everyKeyHasSamples() {
        // `account` and `routes` are varied key by key instead.
        #expect(Set(Self.topLevelSamples.keys) == ConfigurationKeys.topLevel.subtracting(["account", "routes"]))
        #expect(Set(Self.accountSamples.keys) == ConfigurationKeys.accountAnyFlow)
        #expect(Set(Self.routeSamples.keys) == ConfigurationKeys.route)
    }

    @Test func readerAcceptsAndIgnoresSchemaKey() throws {
        let configuration = try F.parse(F.document(#""$schema": "./docs/routes.schema.json""#))
        #expect(configuration.account.flow == .dev)
        #expect(configuration.routes.routes.map(\.prefix) == ["/api"])
        #expect(
            F.problems(F.document(#""$schema": 1"#))
                == [ConfigurationProblem(path: #"$["$schema"]"#, message: "must be a string")])
    }

    /// The validator must accept every valid document and reject every invalid one the schema can judge: the
    /// problem tables' cases and variations of the valid documents (a key removed, given the wrong type, set to
    /// sample values, an unknown key added), each judged by the reader first.
    @Test func jsonschemaAgreesWithTheReader() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The examples name internal-ca.pem, relative to routes.json.
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: directory.appendingPathComponent("internal-ca.pem"))

        var bases: [(name: String, document: JSONValue)] = []
        let shipped = try String(
            contentsOf: ShippedRoutesTests.repositoryRoot.appendingPathComponent("routes.json"), encoding: .utf8)
        bases.append(("routes.json", try Self.value(shipped)))
        for (index, example) in try DocumentedExamplesTests.completeExamples().enumerated() {
            bases.append(("docs/configuration.md example \(index + 1)", try Self.value(example)))
        }
        for (index, document) in Self.validDocuments.enumerated() {
            bases.append(("valid document \(index + 1)", try Self.value(document)))
        }
        var cases: [ValidatorCase] = []
        for base in bases {
            let problems = Self.problems(base.document, baseDirectory: directory.path)
            #expect(problems.isEmpty, "\(base.name) must be valid: \(problems)")
            cases.append(ValidatorCase(name: base.name, config: base.document, valid: true))
        }

        let tableCases = Self.problemTables.filter { Self.isExpressible($0.message) }
        #expect(tableCases.count >= 150)
        for problemCase in tableCases {
            let name = "table: \(problemCase.path): \(problemCase.message)"
            cases.append(ValidatorCase(name: name, config: try Self.value(problemCase.json), valid: false))
        }

        var judged = (valid: 0, invalid: 0)
        for variant in try Self.variants(of: bases) {
            let problems = Self.problems(variant.document, baseDirectory: directory.path)
            guard let valid = Self.verdict(problems) else { continue }
            if valid { judged.valid += 1 } else { judged.invalid += 1 }
            let reader = valid ? "valid" : "\(problems[0])"
            cases.append(
                ValidatorCase(name: "\(variant.name) [reader: \(reader)]", config: variant.document, valid: valid))
        }
        #expect(judged.valid >= 500 && judged.invalid >= 1000, "variations judged: \(judged)")

        let result = try await Self.runValidator(cases)
        // Only the disagreements and the summary: a passing case prints an "ok" line.
        let report = result.output.split(separator: "\n").filter { !$0.hasPrefix("ok ") }.joined(separator: "\n")
        #expect(result.status == 0, "validate_schema.py exited with \(result.status):\n\(report)")
    }
}

// MARK: - Reading the schema

extension SchemaTests {
    /// docs/routes.schema.json, parsed, with `$ref`s to `#/$defs/…` followed.
    struct Document {
        let root: [String: Any]

        struct Failure: Error, CustomStringConvertible {
            let description: String
        }

        static func load() throws -> Document {
            let data = try Data(contentsOf: SchemaTests.schemaFile)
            guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw Failure(description: "docs/routes.schema.json is not a JSON object")
            }
            return Document(root: root)
        }

        /// The schema at `path` below `start`, each step's `$ref` followed.
        func node(_ start: [String: Any], _ path: String...) throws -> [String: Any] {
            var node = try resolved(start)
            for key in path {
                guard let next = node[key] as? [String: Any] else {
                    throw Failure(description: "docs/routes.schema.json: no object at \"\(key)\" in \(path)")
                }
                node = try resolved(next)
            }
            return node
        }

        /// `node`, or what its `$ref` points to.
        func resolved(_ node: [String: Any]) throws -> [String: Any] {
            guard let reference = node["$ref"] as? String else { return node }
            let prefix = "#/$defs/"
            guard reference.hasPrefix(prefix), let definitions = root["$defs"] as? [String: Any],
                let target = definitions[String(reference.dropFirst(prefix.count))] as? [String: Any]
            else { throw Failure(description: "docs/routes.schema.json: cannot resolve \(reference)") }
            return try resolved(target)
        }

        /// The account branch of each flow: `account.allOf[]` is `{"if": {flow: X}, "then": …}`.
        func accountsByFlow() throws -> [AccountFlow: [String: Any]] {
            let account = try node(root, "properties", "account")
            var branches: [AccountFlow: [String: Any]] = [:]
            for branch in account["allOf"] as? [[String: Any]] ?? [] {
                let condition = try node(branch, "if", "properties", "flow")
                guard let name = condition["const"] as? String, let flow = AccountFlow(rawValue: name),
                    let then = branch["then"] as? [String: Any]
                else { throw Failure(description: "docs/routes.schema.json: an account branch is not on one flow") }
                #expect(branches[flow] == nil, "two account branches for \(name)")
                branches[flow] = try resolved(then)
            }
            return branches
        }

        /// Expects `node` to be an object schema with exactly `keys` as properties and no others allowed.
        func expectClosed(_ node: [String: Any], _ keys: Set<String>, _ name: String) throws {
            let properties = Set((node["properties"] as? [String: Any] ?? [:]).keys)
            #expect(
                properties == keys,
                """
                \(name): the reader accepts \(keys.subtracting(properties).sorted()) that the schema does not have; \
                the schema has \(properties.subtracting(keys).sorted()) that the reader rejects
                """)
            #expect(node["additionalProperties"] as? Bool == false, "\(name): additionalProperties must be false")
        }
    }
}

/// The raw values of a closed set of choices.
private func raw<Choice: CaseIterable & RawRepresentable>(_: Choice.Type) -> Set<String>
where Choice.RawValue == String {
    Set(Choice.allCases.map(\.rawValue))
}

// MARK: - Judging a document

extension SchemaTests {
    /// Problems the schema cannot see, by a fragment of their message (the schema's description lists them too).
    static let inexpressible: [(fragment: String, reason: String)] = [
        ("environment variable ", "the environment"),
        ("does not exist", "the file system"),
        ("is a directory, not a file", "the file system"),
        ("is not readable", "the file system"),
        ("is already the prefix of", "unique values across array items"),
        ("resources (", "one resource per scope list"),
        ("not in account.scopes", "a subset of another array"),
        ("sets the same header as", "case-insensitively unique property names"),
        ("is also in \"set\"", "a property name of one object in another array"),
        ("http is allowed only for loopback hosts", "which hosts are loopback, and allowInsecureUpstream"),
        ("http is allowed only for loopback and link-local", "which addresses are loopback or link-local"),
        ("does not name a valid host", "host name and IPv6 syntax beyond characters"),
        ("is not a valid host name or IP address", "host name and IPv6 syntax beyond characters"),
        ("{tenant}", "Microsoft authority shapes"),
        ("must be a Microsoft authority", "Microsoft authority shapes"),
        ("the native flow needs an External ID authority", "Microsoft authority shapes"),
    ]

    static func isExpressible(_ message: String) -> Bool {
        !inexpressible.contains { message.contains($0.fragment) }
    }

    /// What the schema must say about a document with these problems: valid, invalid, or `nil` when every
    /// problem is one it cannot see.
    static func verdict(_ problems: [ConfigurationProblem]) -> Bool? {
        if problems.isEmpty { return true }
        return problems.contains { isExpressible($0.message) } ? false : nil
    }

    /// The reader's problems with `document`, run with every variable its `…Env` keys name set.
    static func problems(_ document: JSONValue, baseDirectory: String) -> [ConfigurationProblem] {
        var environment = ["BEARER_PROXY_KEY": "key"]
        for name in variableNames(in: document) { environment[name] = "value" }
        do {
            _ = try Configuration.parse(
                Data(text(document).utf8), environment: environment, baseDirectory: baseDirectory)
            return []
        } catch {
            return error.problems
        }
    }

    static func variableNames(in value: JSONValue) -> [String] {
        switch value {
        case .object(let members):
            members.flatMap { key, member in
                if key.hasSuffix("Env"), case .string(let name) = member { return [name] }
                return variableNames(in: member)
            }
        case .array(let elements): elements.flatMap(variableNames)
        default: []
        }
    }

    /// Every case of the problem tables (syntax errors aside).
    static var problemTables: [ProblemCase] {
        DocumentProblemTests.cases + RouteProblemTests.prefixCases + RouteProblemTests.upstreamCases
            + RouteProblemTests.scopeCases + RouteProblemTests.authCases + RouteProblemTests.headerCases
            + RouteProblemTests.otherCases + AccountProblemTests.generalCases + AccountProblemTests.oauthCases
            + AccountProblemTests.nativeCases + AccountProblemTests.browserCases
            + AccountProblemTests.clientCredentialsCases + AccountProblemTests.otherFlowCases
            + AccountProblemTests.managedIdentityCases
            + FirebaseProblemTests.accountCases + FirebaseProblemTests.routeCases
    }
}

// MARK: - Variations

extension SchemaTests {
    /// A step into a JSON document.
    enum Step: Hashable {
        case key(String)
        case index(Int)
    }

    struct Variant {
        var name: String
        var document: JSONValue
    }

    /// Each base with one change: every member and element removed or given the wrong type, an unknown key in
    /// every object, and every top-level, account and route key set to its samples (all of them for the first
    /// document of each flow, the first sample for the others), plus parameter and header names for the first
    /// document of each flow.
    static func variants(of bases: [(name: String, document: JSONValue)]) throws -> [Variant] {
        var variants: [Variant] = []
        var flowsSeen: Set<String> = []
        for (baseName, document) in bases {
            /// The base with the member or element at `path` set to `value`, or removed.
            func add(_ path: [Step], _ value: JSONValue?) {
                let change = value.map { "= " + text($0) } ?? "removed"
                variants.append(
                    Variant(
                        name: "\(baseName): \(pathText(path)) \(change)",
                        document: updating(document, at: path[...], to: value)))
            }
            for (path, value) in members(of: document) {
                add(path, nil)
                if case .string = value { add(path, .integer(42)) } else { add(path, .string("x")) }
                if case .object = value { add(path + [.key("unknownKey")], .bool(true)) }
            }
            add([.key("unknownKey")], .bool(true))

            let flow = member(document, [.key("account"), .key("flow")]).flatMap(\.stringValue) ?? ""
            let everySample = flowsSeen.insert(flow).inserted
            let routeCount = member(document, [.key("routes")]).flatMap(\.arrayValue)?.count ?? 0
            var objects: [(path: [Step], samples: [String: [String]])] = [
                ([], topLevelSamples), ([.key("account")], accountSamples),
            ]
            objects += (0..<routeCount).map { ([.key("routes"), .index($0)], routeSamples) }
            for (objectPath, samples) in objects {
                for (key, values) in samples.sorted(by: { $0.key < $1.key }) {
                    for sample in everySample ? values : Array(values.prefix(1)) {
                        add(objectPath + [.key(key)], try Self.value(sample))
                    }
                }
            }
            guard everySample else { continue }
            for name in parameterNames {
                add([.key("account"), .key("extraParameters")], .object([name: .string("x")]))
            }
            guard routeCount > 0 else { continue }
            let headers: [Step] = [.key("routes"), .index(0), .key("headers")]
            for name in headerNames {
                add(headers, .object(["set": .object([name: .string("v")])]))
                add(headers, .object(["remove": .array([.string(name)])]))
            }
            for value in headerValues {
                add(headers, .object(["set": .object(["X-Probe": .string(value)])]))
            }
        }
        return variants
    }

    /// The path and value of every object member and array element, depth first.
    static func members(of value: JSONValue, at path: [Step] = []) -> [([Step], JSONValue)] {
        switch value {
        case .object(let members):
            members.sorted { $0.key < $1.key }.flatMap { key, member in
                [(path + [.key(key)], member)] + Self.members(of: member, at: path + [.key(key)])
            }
        case .array(let elements):
            elements.enumerated().flatMap { index, element in
                [(path + [.index(index)], element)] + members(of: element, at: path + [.index(index)])
            }
        default: []
        }
    }

    static func member(_ value: JSONValue, _ path: [Step]) -> JSONValue? {
        path.reduce(Optional(value)) { value, step in
            switch (value, step) {
            case (.object(let members)?, .key(let key)): members[key]
            case (.array(let elements)?, .index(let index)) where elements.indices.contains(index): elements[index]
            default: nil
            }
        }
    }

    /// `value` with the member or element at `path` set to `newValue`, or removed when that is `nil`.
    static func updating(_ value: JSONValue, at path: ArraySlice<Step>, to newValue: JSONValue?) -> JSONValue {
        guard let step = path.first else { return value }
        let rest = path.dropFirst()
        switch (value, step) {
        case (.object(var members), .key(let key)):
            members[key] = rest.isEmpty ? newValue : members[key].map { updating($0, at: rest, to: newValue) }
            return .object(members)
        case (.array(var elements), .index(let index)) where elements.indices.contains(index):
            if !rest.isEmpty {
                elements[index] = updating(elements[index], at: rest, to: newValue)
            } else if let new = newValue {
                elements[index] = new
            } else {
                elements.remove(at: index)
            }
            return .array(elements)
        default:
            return value
        }
    }

    /// `routes[0].headers.set.X-Tenant`, as problems name paths.
    static func pathText(_ path: [Step]) -> String {
        var text = ""
        for step in path {
            switch step {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text.isEmpty ? "$" : text
    }
}

// MARK: - Samples

extension SchemaTests {
    /// Values to try for each key, as JSON; the first is an ordinary valid one. Whether each is valid where it is
    /// tried is the reader's call.
    static let topLevelSamples: [String: [String]] = [
        "$schema": [#""./docs/routes.schema.json""#, #""""#, #""https://example.com/routes.schema.json""#],
        "listen": [
            #""localhost:0""#, #""[::1]:8080""#, #""0.0.0.0:80""#, #""127.0.0.1:08080""#, #""localhost""#,
            #"":8080""#, #""host:""#, #""host:65536""#, #""[::1]""#, #""::1:8080""#, #""[::1]:-1""#, #""a b:80""#,
            // #26 item 2: socket files and lists ("unix:" alone needs XDG_RUNTIME_DIR, which the schema cannot see).
            #""unix:/run/bp/proxy.sock""#, #""unix:relative.sock""#, #"["127.0.0.1:0", "unix:/run/bp/proxy.sock"]"#,
            #""unix:/run/bp/""#, #""unix:/run/..""#, "[]", #"["127.0.0.1:1", "127.0.0.1:1"]"#, "8080", "[8080]",
            #"["unix:/a/./"]"#,
        ],
        "tls": [#"{"caFile": "\#(F.existingFile)"}"#, "{}"],
        "allowedHosts": [
            #"["devbox.local"]"#, "[]", #"["[::1]", "::1", "10.0.0.5", "DevBox.Local"]"#, #"["*.x"]"#, #"["x:80"]"#,
            #"["http://x"]"#, #"[""]"#, #"["a b"]"#,
        ],
        "requireHeader": [
            #"{"name": "X-Requested-By"}"#, #"{"name": "X-Requested-By", "value": "cli"}"#, "{}", #"{"name": ""}"#,
            #"{"name": "Authorization"}"#, #"{"name": "a b"}"#, #"{"name": "X", "value": ""}"#,
            #"{"name": "X", "value": " x"}"#, #"{"name": "X", "extra": 1}"#, #""X-Requested-By""#,
        ],
        "allowUsers": [
            #"["root", 1001]"#, "[]", "[0]", "[4294967294]", "[-1]", "[4294967295]", #"[""]"#, "[1.5]", "5",
        ],
        "allowedOrigins": [
            #"["http://localhost:3000"]"#, "[]",
            #"["HTTP://X.example", "https://x.example:443", "http://[::1]:5173/"]"#,
            #"["http://x:0"]"#, #"["*"]"#, #"["null"]"#, #"["ftp://x"]"#, #"["http://x/app"]"#, #"["http://u@x"]"#,
            #"["http://x?y"]"#, #"["http://x#y"]"#,
        ],
        "allowRemote": ["true", "false"],
        "requireKey": ["true", "false"],
    ]

    static let timeouts = ["5", "0.5", "86400", "0", "86400.5", "-1"]

    static let accountSamples: [String: [String]] = [
        "flow": AccountFlow.allCases.map { "\"\($0.rawValue)\"" },
        "authority": [
            #""https://login.microsoftonline.com/organizations""#,
            #""https://contoso.ciamlogin.com/contoso.onmicrosoft.com""#, #""http://localhost:9000/tenant""#,
            #""login.microsoftonline.com/common""#, #""https://login.microsoftonline.com/common?x=1""#,
            #""https://u@login.microsoftonline.com/common""#, #""""#,
        ],
        "issuer": [
            #""https://accounts.example.com""#, #""https://accounts.example.com/""#, #""http://127.0.0.1:9000""#,
            #""accounts.example.com""#, #""https://id.example.com#x""#, #""""#,
        ],
        "clientId": [#""00000000-0000-0000-0000-000000000000""#, #""""#],
        "extraParameters": [#"{"resource": "https://api.example.com"}"#, "{}", #"{"": "x"}"#, #"{"a": 1}"#],
        "clientCapabilities": [#"["cp1"]"#, "[]", #"[""]"#, "[1]"],
        "tokenType": [#""dpop""#, #""auto""#, #""bearer""#, #""DPoP""#, "1"],
        "username": [#""alice@contoso.com""#, #""""#],
        "challenge": [#""otp""#, #""password""#, #""sms""#],
        "passwordEnv": [#""PASSWORD""#, #""hunter 2""#, #""1PASSWORD""#],
        "prompt": [
            #""login""#, #""none""#, #""consent""#, #""select_account""#, #""create""#, #""select-account""#,
        ],
        "loginHint": [#""alice@contoso.com""#, #""""#],
        "domainHint": [#""contoso.com""#, #""""#],
        "redirectPort": ["8400", "0", "65535", "65536", "-1", "1.5"],
        "clientSecretEnv": [#""CLIENT_SECRET""#, #""Abc~123.secret""#],
        "clientAuthentication": [#""basic""#, #""post""#, #""Basic""#],
        "certificate": [
            #"{"certFile": "\#(F.existingFile)", "keyFile": "\#(F.existingFile)"}"#,
            #"{"certFile": "\#(F.existingFile)", "keyFile": "\#(F.existingFile)", "algorithm": "RS256"}"#,
            #"{"certFile": "\#(F.existingFile)"}"#,
            #"{"certFile": "\#(F.existingFile)", "keyFile": "\#(F.existingFile)", "algorithm": "ES256"}"#,
            #"{"certFile": "", "keyFile": "\#(F.existingFile)"}"#,
        ],
        "clientAssertion": [
            #"{"file": "\#(F.existingFile)"}"#, #"{"tokenEnv": "FEDERATED_TOKEN"}"#,
            #"{"command": ["cat", "{resource}"], "timeoutSeconds": 5}"#, #"{"fileEnv": "TOKEN_FILE"}"#, "{}",
            #"{"file": "\#(F.existingFile)", "tokenEnv": "FEDERATED_TOKEN"}"#,
            #"{"tokenEnv": "FEDERATED_TOKEN", "timeoutSeconds": 5}"#, #"{"command": []}"#, #"{"command": [""]}"#,
            #"{"command": ["cat", 1]}"#, #"{"file": ""}"#, #"{"tokenEnv": "a.b.c"}"#, #"{"file": 1}"#,
            #"{"tokenEnv": "T", "files": "x"}"#, #""token.jwt""#,
        ],
        "protocol": [#""imds""#, #""app-service""#, #""msi""#, "1"],
        "endpoint": [
            #""http://169.254.169.254/metadata/identity/oauth2/token""#, #""https://mi.example.com/token""#,
            #""http://127.0.0.1:41000/msi/token""#, #""http://mi.example.com/token""#, #""ftp://127.0.0.1/token""#,
            #""https://mi.example.com/token?x=1""#, #""""#,
        ],
        "objectId": [#""00000000-0000-0000-0000-000000000001""#, #""oid""#, #""""#],
        "resourceId": [
            #""/subscriptions/0/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/i""#,
            #""i""#, #""""#,
        ],
        "refreshTokenEnv": [#""REFRESH_TOKEN""#, #""x-y""#],
        "command": [
            #"["gh", "auth", "token"]"#, #"["tok", "{scopes}", "{resource}", "{a1}", "{}", "{{scopes}}"]"#, "[]",
            #"[""]"#, #"["tok", "{scope}"]"#, #"["tok", "{Scopes}"]"#, #"[1]"#,
        ],
        "timeoutSeconds": timeouts,
        "tokenEnv": [#""TOKEN""#, #""TOKEN-1""#],
        "apiKeyEnv": [#""API_KEY""#, #""_""#, #""""#],
        "projectId": [#""my-proj""#, #""example.com:my-proj""#, #""My-Proj""#, #""1proj""#, #""""#],
        "provider": [#""password""#, #""microsoft.com""#, #""microsoft""#],
        "tenant": [
            #""common""#, #""Organizations""#, #""72f988bf-86f1-41af-91ab-2d7cd011db47""#,
            #""contoso.onmicrosoft.com""#, #""contoso""#, #""""#,
        ],
        "scopes": [#"["User.Read"]"#, #"["User.Read", "openid"]"#, "[]", #"["a b"]"#],
        "email": [#""alice@example.com""#, #""@@x""#, #""alice""#, #""a@""#, #""a b@c""#, #""""#],
        "authDomain": [#""my-proj.firebaseapp.com""#, #""https://my-proj.firebaseapp.com""#, #""""#],
        "gcipTenantId": [#""tenant-a1b2c""#, #""tenant/1""#, #""""#],
        "apiBaseURL": [
            #""https://firebase-gateway.example""#, #""http://127.0.0.1:9099/""#, #""http://example.com""#,
            #""firebase.example""#, #""""#,
        ],
        "emulatorHost": [
            #""127.0.0.1:9099""#, #""localhost:9099""#, #""[::1]:9099""#, #""[::ffff:127.0.0.1]:9099""#,
            #""127.0.0.1:0""#, #""10.0.0.5:9099""#, #""[::2]:9099""#, #""127.0.0.01:9099""#,
        ],
    ]

    static let routeSamples: [String: [String]] = [
        "requireHeader": [#"{"name": "X-Requested-By", "value": "cli"}"#, #"{"name": "Host"}"#, "[]"],
        "prefix": [
            #""/probe""#, #""/""#, #""/-x""#, #""/...""#, #""/.well-known""#, #""/a:b@c/~d""#, #""/-""#, #""/-/x""#,
            #""/.""#, #""/a/..""#, #""/a/""#, #""//""#, #""/a//b""#, #""/%41""#, #""/a?b""#, #""/a#b""#, #""/a b""#,
            #""/é""#, #""a""#, #""""#,
        ],
        "upstream": [
            #""https://probe.example.com/v1""#, #""HTTPS://Probe.Example.com:8443/a%2Fb/""#, #""http://[::1]:9000""#,
            #""https://probe.example.com:0""#, #""https://probe.example.com:00080""#,
            #""https://probe.example.com:65536""#, #""https://probe.example.com:""#, #""https://[::1""#,
            #""https://u@probe.example.com""#, #""https://probe.example.com/a%2""#,
            #""https://probe.example.com/a/%2e/b""#, #""https://probe.example.com/a/.../b""#,
            #""https://probe.example.com/a b""#, #""ftp://probe.example.com""#, #""probe.example.com""#,
            #""https://""#, #""https://probe.example.com?q""#, #""https://probe.example.com#f""#,
            #""https://probe.example.com/é""#, #""https://-probe-.example.com""#, #""http://probe.example.com""#,
        ],
        "scopes": [
            #"["api://probe/Probe.Read"]"#, #"["User.Read", "Mail.Read"]"#,
            #"["https://graph.microsoft.com/.default"]"#,
            #"["openid"]"#, #"["OpenID"]"#, #"["https://graph.microsoft.com"]"#, #"["api://todo/"]"#,
            #"["/User.Read"]"#, #"["a/b/c"]"#, #"["a\"b"]"#, #"["a/b://c"]"#, "[]", #"[""]"#, #"["a b"]"#,
            #"["é"]"#,
        ],
        "auth": [#""none""#, #""bearer""#, #""Bearer""#, #""discover""#, #""on-behalf-of""#],
        "onBehalfOf": [
            "{}", #"{"grant": "jwt-bearer"}"#, #"{"grant": "token-exchange", "audience": "https://x"}"#,
            #"{"audience": "x"}"#, #"{"grant": "obo"}"#, #"{"grant": "token-exchange", "resource": "not a uri"}"#,
            #"{"grant": "token-exchange", "audience": " x"}"#, #"{"maxSubjects": 0}"#, #"{"maxSubjects": 5}"#,
            #"{"grant": "token-exchange", "actorTokenType": "urn:x"}"#,
            #"{"grant": "token-exchange", "actorToken": {"tokenEnv": "APP_SECRET"}, "actorTokenType": "urn:x"}"#,
            #"{"grant": "token-exchange", "subjectTokenType": "urn:ietf:params:oauth:token-type:jwt"}"#,
            #"{"maxSubject": 5}"#, "[]",
        ],
        "tokenType": [#""auto""#, #""bearer""#, #""dpop""#, #""DPoP""#, "1"],
        "upstreamProtocol": [#""http/1.1""#, #""h2""#, #""auto""#, #""H2""#, #""h2c""#, "2"],
        "discovery": [
            #"{"clientId": "app", "redirectPort": 8400, "allowPrivateAddresses": true}"#, "{}",
            #"{"clientMetadataDocument": "https://app.example.com/client.json"}"#,
            #"{"clientMetadataDocument": "https://app.example.com/client.json", "clientId": "app"}"#,
            #"{"clientMetadataDocument": "http://app.example.com/client.json"}"#,
            #"{"clientMetadataDocument": "https://app.example.com"}"#, #"{"clientId": ""}"#,
            #"{"redirectPort": 65536}"#, #"{"allowPrivateAddresses": "yes"}"#, #"{"clientID": "app"}"#, "[]",
            #"{"clientId": "app", "clientSecretEnv": "APP_SECRET"}"#, #"{"clientSecretEnv": "APP_SECRET"}"#,
            #"{"clientId": "app", "clientSecretEnv": "not a name"}"#,
        ],
        "token": [#""firebase-id""#, #""provider-access""#, #""id""#],
        "headers": [#"{"set": {"X-Probe": "1"}, "remove": ["Cookie"]}"#, "{}", #"{"set": {}}"#, #"{"add": {}}"#],
        "timeoutSeconds": timeouts,
        "idleTimeoutSeconds": timeouts,
        "methods": [
            #"["GET"]"#, #"["get", "M-SEARCH", "PATCH"]"#, "[]", #"["connect"]"#, #"["Trace"]"#, #"["PO ST"]"#,
            #"[""]"#,
        ],
        "allowInsecureUpstream": ["true", "false"],
        "forwardedHeaders": ["true", "false"],
        "tls": [#"{"caFile": "\#(F.existingFile)"}"#, "{}"],
    ]

    /// `extraParameters` names: every name some flow reserves, as written and uppercased, and a few free ones.
    static var parameterNames: [String] {
        var names = Set(AccountFlow.allCases.flatMap { ConfigurationReader.reservedParameters(for: $0).keys })
        names.formUnion(FirebaseAccount.reservedCustomParameters)
        names.formUnion(["tenant", "prompt", "login_hint", "domain_hint", "resource", "audience", "hd"])
        return names.sorted().flatMap { [$0, $0.uppercased()] }
    }

    /// Every field of HeaderPolicy's table (the reader reserves some, the schema must agree on each), in other
    /// spellings too, and names that are not names.
    static let headerNames =
        HeaderPolicy.entries.map(\.name.description) + [
            "Authorization", "CONTENT-LENGTH", "Transfer-Encoding", "Keep-Alive", "Proxy-Connection", "TE",
            "X-Request-ID", "X-Forwarded-For", "X-Tenant", "Cookie", "TE2", "X Tenant", "Cookie:", "Höst", "",
        ]

    static let headerValues = ["", "a\tb", "a\r\nb", " a", "a ", "\t", "\u{7F}", "é", "a\u{0}b"]

    /// Valid documents for what the documented examples leave out.
    static let validDocuments: [String] = [
        #"""
        {
          "account": {"flow": "managed-identity", "protocol": "imds",
                      "endpoint": "http://169.254.169.254/metadata/identity/oauth2/token",
                      "clientId": "00000000-0000-0000-0000-000000000000"},
          "routes": [
            {"prefix": "/arm", "upstream": "https://management.azure.com",
             "scopes": ["https://management.azure.com/.default"]},
            {"prefix": "/public", "upstream": "https://example.com", "auth": "none"}
          ]
        }
        """#,
        #"""
        {
          "account": {"flow": "managed-identity",
                      "resourceId": "/subscriptions/0/providers/Microsoft.ManagedIdentity/userAssignedIdentities/i"},
          "routes": [{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["api://api/.default"]}]
        }
        """#,
        #"""
        {
          "$schema": "./docs/routes.schema.json", "listen": "[::1]:0", "allowRemote": false, "requireKey": true,
          "allowedHosts": ["devbox.local", "10.0.0.5", "[::1]", "fe80::1", "DEVBOX.LOCAL"],
          "allowedOrigins": ["http://localhost:3000", "HTTPS://App.Example.com:8443/", "http://[::1]:5173"],
          "tls": {"caFile": "\#(F.existingFile)"},
          "account": {"flow": "dev"},
          "routes": [
            {"prefix": "/", "upstream": "https://api.example.com", "scopes": ["api://example/Data.Read"]},
            {"prefix": "/a/b.c/~x", "upstream": "HTTP://127.0.0.1:8080/base%2Fpath/",
             "scopes": ["https://graph.microsoft.com/.default", "User.Read"], "auth": "bearer",
             "methods": ["get", "Post", "PURGE"], "timeoutSeconds": 2.5, "forwardedHeaders": true,
             "headers": {"set": {"X-Tenant": "contoso", "Accept": "application/json;\tq=1"}, "remove": ["Cookie"]},
             "tls": {"caFile": "\#(F.existingFile)"}},
            {"prefix": "/.well-known", "upstream": "http://localhost:5000", "auth": "none"},
            {"prefix": "/-x", "upstream": "http://[::1]:9000/v1", "scopes": [".default"]},
            {"prefix": "/reports", "upstream": "http://reports.internal:8080", "allowInsecureUpstream": true,
             "scopes": ["api://reports/Reports.Read"], "timeoutSeconds": 86400}
          ]
        }
        """#,
        #"""
        {
          "account": {"flow": "native", "authority": "https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
                      "clientId": "c", "username": "alice", "challenge": "otp", "clientCapabilities": ["cp1"],
                      "extraParameters": {"dc": "ESTS-PUB-WUS2-AZ1-FD000-TEST1"}},
          "routes": [{"prefix": "/todo", "upstream": "https://api.contoso.com", "scopes": ["api://todo/ToDo.Read"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "device-code", "issuer": "https://accounts.example.com/", "clientId": "c",
                      "extraParameters": {"audience": "https://api.example.com"}},
          "routes": [{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["https://api.example.com/read"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "browser", "issuer": "http://127.0.0.1:9000", "clientId": "c", "prompt": "none",
                      "loginHint": "alice", "redirectPort": 65535, "extraParameters": {"resource": "x"}},
          "routes": [{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["User.Read"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "client-credentials", "authority": "https://login.microsoftonline.com/contoso.com",
                      "clientId": "c",
                      "certificate": {"certFile": "\#(F.existingFile)", "keyFile": "\#(F.existingFile)",
                                      "algorithm": "RS256"}},
          "routes": [
            {"prefix": "/graph", "upstream": "https://graph.microsoft.com/v1.0",
             "scopes": ["https://graph.microsoft.com/.default", "https://graph.microsoft.com/.default"]},
            {"prefix": "/public", "upstream": "https://example.com", "auth": "none"}
          ]
        }
        """#,
        #"""
        {
          "account": {"flow": "client-credentials", "issuer": "https://id.example.com", "clientId": "c",
                      "clientSecretEnv": "CLIENT_SECRET", "clientAuthentication": "basic"},
          "routes": [{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["api://api/.default"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "client-credentials", "authority": "https://login.microsoftonline.com/contoso.com",
                      "clientId": "c", "clientAssertion": {"file": "\#(F.existingFile)"}},
          "routes": [{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["api://api/.default"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "client-credentials", "issuer": "https://id.example.com", "clientId": "c",
                      "extraParameters": {"resource": "api://api"},
                      "clientAssertion": {"command": ["sh", "-c", "cat \"$TOKEN_FILE\"", "{x}"], "timeoutSeconds": 2}},
          "routes": [{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["api://api/.default"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "refresh-token",
                      "authority": "https://login.microsoftonline.us/00000000-0000-0000-0000-000000000000",
                      "clientId": "c", "refreshTokenEnv": "REFRESH_TOKEN", "clientCapabilities": []},
          "routes": [{"prefix": "/graph", "upstream": "https://graph.microsoft.us", "scopes": ["User.Read"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "command", "timeoutSeconds": 0.5,
                      "command": ["tok", "--scope={scopes}", "{\"json\": 1}", "{resource}", "{}", "{{scopes}}", "{a1}"]},
          "routes": [{"prefix": "/api", "upstream": "https://api.example.com", "scopes": ["api://api/Read"]}]
        }
        """#,
        #"""
        {
          "account": {"flow": "static", "tokenEnv": "TOKEN"},
          "routes": [
            {"prefix": "/a", "upstream": "https://a.example.com", "scopes": ["api://a/Read"]},
            {"prefix": "/b", "upstream": "https://b.example.com"},
            {"prefix": "/c", "upstream": "https://c.example.com", "auth": "none", "headers": {"remove": ["Cookie"]}}
          ]
        }
        """#,
        #"""
        {
          "account": {"flow": "firebase", "apiKeyEnv": "API_KEY", "projectId": "my-proj",
                      "tenant": "72f988bf-86f1-41af-91ab-2d7cd011db47", "prompt": "consent",
                      "scopes": ["User.Read", "Mail.Read", "openid"], "extraParameters": {"hd": "x"},
                      "authDomain": "my-proj.firebaseapp.com", "gcipTenantId": "tenant-a1b2c",
                      "emulatorHost": "[::1]:9099", "redirectPort": 0},
          "routes": [
            {"prefix": "/api", "upstream": "https://api.example.com", "token": "firebase-id", "auth": "bearer"},
            {"prefix": "/mail", "upstream": "https://graph.microsoft.com/v1.0", "token": "provider-access",
             "scopes": ["Mail.Read"]},
            {"prefix": "/graph", "upstream": "https://graph.microsoft.com/v1.0", "token": "provider-access"},
            {"prefix": "/public", "upstream": "https://example.com", "auth": "none"}
          ]
        }
        """#,
        #"""
        {
          "account": {"flow": "firebase", "apiKeyEnv": "API_KEY", "projectId": "example.com:my-proj",
                      "provider": "password", "email": "alice@example.com", "emulatorHost": "localhost:9099"},
          "routes": [
            {"prefix": "/api", "upstream": "http://127.0.0.1:5001/my-proj/us-central1/api"},
            {"prefix": "/public", "upstream": "https://example.com", "auth": "none"}
          ]
        }
        """#,
    ]
}

// MARK: - JSON text

extension SchemaTests {
    static func value(_ text: String) throws -> JSONValue {
        try JSONValue.parse(Data(text.utf8)).get()
    }

    /// JSON text for `value`, object keys sorted.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .number(let number): "\(number)"
        case .string(let string): quoted(string)
        case .array(let elements): "[" + elements.map(text).joined(separator: ", ") + "]"
        case .object(let members):
            "{"
                + members.sorted { $0.key < $1.key }.map { quoted($0.key) + ": " + text($0.value) }
                .joined(separator: ", ") + "}"
        }
    }

    static func quoted(_ string: String) -> String {
        JSONPath.quoted(string)
    }
}

extension JSONValue {
    fileprivate var stringValue: String? {
        if case .string(let string) = self { string } else { nil }
    }

    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }
}

// MARK: - Running the validator

extension SchemaTests {
    /// One document for validate_schema.py and whether the schema must accept it.
    struct ValidatorCase {
        var name: String
        var config: JSONValue
        var valid: Bool
    }

    /// Runs Tests/python/validate_schema.py with `cases` on stdin; its stdout and stderr come back together.
    static func runValidator(_ cases: [ValidatorCase]) async throws -> (status: Int32, output: String) {
        let lines = cases.map { validatorCase in
            #"{"name": \#(quoted(validatorCase.name)), "valid": \#(validatorCase.valid), "config": "#
                + text(validatorCase.config) + "}"
        }
        // Through swift-subprocess, not Foundation's Process (see ChildProcess).
        let result = try await ChildWatchdog.run(what: "validate_schema.py") { watchdog in
            try await Subprocess.run(
                CommandRunner.executable("/usr/bin/env"), arguments: ["python3", script.path, schemaFile.path],
                input: .string("[\n" + lines.joined(separator: ",\n") + "\n]\n"), output: .string(limit: .max),
                error: .combinedWithOutput
            ) { execution in
                watchdog.arm { try? execution.send(signal: .kill) }
            }
        }
        return (CommandRunner.status(result.terminationStatus), result.standardOutput)
    }
}
