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

/// The key tables of docs/configuration.md list exactly the keys the reader accepts, object by object and, for
/// the account, flow by flow.
@Suite struct DocumentedKeysTests {
    /// The section of each key table and the keys the reader accepts there.
    static let tables: [String: Set<String>] = [
        "Top-level keys": ConfigurationKeys.topLevel,
        "Routes": ConfigurationKeys.route,
        "The account": ConfigurationKeys.accountAnyFlow,
    ]

    /// What "OAuth flows" means in the account table's `flows` column.
    static let oauthFlows: [AccountFlow] = [.native, .deviceCode, .browser, .clientCredentials, .refreshToken]

    @Test func everyKeyTableIsChecked() throws {
        #expect(Set(try Self.keyTables().keys) == Set(Self.tables.keys))
    }

    @Test(arguments: tables.keys.sorted())
    func tableListsTheReaderKeys(section: String) throws {
        let rows = try #require(try Self.keyTables()[section], "no key table under \"\(section)\"")
        let documented = rows.compactMap { Self.codeSpans(in: $0["key"] ?? "").first }
        #expect(documented.count == Set(documented).count, "\(section): a key is listed twice")
        Self.expect(Set(documented), equals: Self.tables[section] ?? [], "docs/configuration.md, \(section)")
    }

    @Test(arguments: AccountFlow.allCases)
    func accountTableListsTheKeysOfEachFlow(flow: AccountFlow) throws {
        let rows = try #require(try Self.keyTables()["The account"])
        var documented: Set<String> = []
        for row in rows {
            guard let key = Self.codeSpans(in: row["key"] ?? "").first else { continue }
            let flows = try Self.flows(in: row["flows"] ?? "", key: key)
            if flows.contains(flow) { documented.insert(key) }
        }
        Self.expect(
            documented, equals: ConfigurationKeys.account(for: flow),
            "docs/configuration.md, The account, flow \(flow.rawValue)")
    }

    /// Objects documented inside a row: the row's example object names no other keys, and the row mentions every
    /// key the reader accepts as `"key"`.
    @Test(arguments: [
        ("Top-level keys", "tls", ConfigurationKeys.tls),
        ("Top-level keys", "requireHeader", ConfigurationKeys.requireHeader),
        ("Routes", "tls", ConfigurationKeys.tls),
        ("Routes", "headers", ConfigurationKeys.headers),
        ("Routes", "discovery", ConfigurationKeys.discovery),
        ("Routes", "onBehalfOf", ConfigurationKeys.onBehalfOf),
        ("The account", "certificate", ConfigurationKeys.certificate),
        ("The account", "clientAssertion", ConfigurationKeys.clientAssertion),
    ])
    func rowDocumentsTheNestedKeys(section: String, key: String, keys: Set<String>) throws {
        let rows = try #require(try Self.keyTables()[section])
        let row = try #require(rows.first { Self.codeSpans(in: $0["key"] ?? "").first == key })
        let meaning = row["meaning"] ?? ""
        let example = try #require(Self.codeSpans(in: meaning).first { $0.hasPrefix("{") }, "\(key): no example")
        let object = try JSONSerialization.jsonObject(with: Data(example.utf8)) as? [String: Any] ?? [:]
        let extra = Set(object.keys).subtracting(keys)
        let missing = keys.filter { !meaning.contains("\"\($0)\"") }
        #expect(extra.isEmpty, "\(section), \(key): the example has \(extra.sorted()), which the reader rejects")
        #expect(missing.isEmpty, "\(section), \(key): \(missing.sorted()) accepted by the reader but not mentioned")
    }

    static func expect(_ documented: Set<String>, equals accepted: Set<String>, _ table: String) {
        #expect(
            documented == accepted,
            """
            \(table): missing (accepted but not documented): \(accepted.subtracting(documented).sorted()); \
            extra (documented but rejected): \(documented.subtracting(accepted).sorted())
            """)
    }

    /// The flows a `flows` cell names: `all`, `OAuth flows` and flow names in backticks.
    static func flows(in cell: String, key: String) throws -> Set<AccountFlow> {
        if cell.trimmingCharacters(in: .whitespaces) == "all" { return Set(AccountFlow.allCases) }
        var flows: Set<AccountFlow> = cell.contains("OAuth flows") ? Set(oauthFlows) : []
        for name in codeSpans(in: cell) {
            let flow = try #require(AccountFlow(rawValue: name), "\(key): \"\(name)\" is not a flow")
            flows.insert(flow)
        }
        #expect(!flows.isEmpty, "\(key): no flows")
        return flows
    }

    /// The tables whose first column is `key`, by the heading they are under; each row maps column names to cells.
    static func keyTables() throws -> [String: [[String: String]]] {
        let text = try String(contentsOf: DocumentedExamplesTests.document, encoding: .utf8)
        var tables: [String: [[String: String]]] = [:]
        var section = ""
        var header: [String]?
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("#") {
                section = String(line.drop { $0 == "#" }.drop { $0 == " " })
                header = nil
            } else if line.hasPrefix("|") {
                let cells = Self.cells(of: line)
                guard let columns = header else {
                    header = cells
                    continue
                }
                let isSeparator = cells.allSatisfy { $0.allSatisfy { "-: ".contains($0) } }
                guard columns.first == "key", !isSeparator else { continue }
                tables[section, default: []].append(
                    Dictionary(zip(columns, cells), uniquingKeysWith: { first, _ in first }))
            } else {
                header = nil
            }
        }
        return tables
    }

    /// The cells of a table row, split at `|` but not at `\|`, trimmed.
    static func cells(of line: String) -> [String] {
        var cells: [String] = []
        var cell = ""
        var previous: Character?
        for character in line.dropFirst() {
            if character == "|", previous != "\\" {
                cells.append(cell.trimmingCharacters(in: .whitespaces))
                cell = ""
            } else {
                cell.append(character)
            }
            previous = character
        }
        return cells
    }

    /// The contents of the `code spans` in `text`, in order.
    static func codeSpans(in text: String) -> [String] {
        text.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
    }
}
