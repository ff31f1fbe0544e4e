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

/// A machine's transitions, found by trying every event from every state reachable from its start (#23 item 7), as
/// the markdown table docs/architecture.md shows. The doc's table is checked against this one, so the picture
/// cannot drift from the code: change a transition and the test prints the table to paste.
struct TransitionTable {
    struct Row: Hashable, Comparable {
        var from: String
        var event: String
        var to: String
        var action: String

        static func < (lhs: Row, rhs: Row) -> Bool {
            (lhs.from, lhs.event) < (rhs.from, rhs.event)
        }
    }

    private(set) var rows: Set<Row> = []

    /// Explores from `start` (or from each of `starts`): `name` names a state as the table shows it (equal names are
    /// one state), `events` are tried in every state, and each returns the action's name.
    init<Machine>(
        start: Machine, name: (Machine) -> String, events: [(String, (inout Machine) -> String)]
    ) {
        self.init(starts: [start], name: name, events: events)
    }

    init<Machine>(
        starts: [Machine], name: (Machine) -> String, events: [(String, (inout Machine) -> String)]
    ) {
        var seen = Set(starts.map(name))
        var queue = starts
        while !queue.isEmpty {
            let machine = queue.removeFirst()
            for (event, apply) in events {
                var next = machine
                let action = apply(&next)
                rows.insert(Row(from: name(machine), event: event, to: name(next), action: action))
                if seen.insert(name(next)).inserted { queue.append(next) }
            }
        }
    }

    /// Rows the table leaves out (e.g. the illegal events, when the document says what they all do).
    var omitted: (Row) -> Bool = { _ in false }

    /// The rows whose event changes something (a state or an action): "nothing happens" rows are left out.
    var markdown: String {
        let header = "| from | event | to | action |\n|---|---|---|---|\n"
        return header
            + rows.filter { ($0.from != $0.to || $0.action != "—") && !omitted($0) }.sorted()
            .map { "| \($0.from) | \($0.event) | \($0.to) | \($0.action) |" }.joined(separator: "\n") + "\n"
    }

    /// Checks that docs/architecture.md holds exactly this table between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
    func expectDocumented(as name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = ShippedRoutesTests.repositoryRoot.appendingPathComponent("docs/architecture.md")
        let document = try String(contentsOf: path, encoding: .utf8)
        let begin = "<!-- \(name):begin -->\n"
        let end = "<!-- \(name):end -->"
        guard let start = document.range(of: begin),
            let stop = document.range(of: end, range: start.upperBound..<document.endIndex)
        else {
            Issue.record("docs/architecture.md has no \(begin)…\(end) section", sourceLocation: sourceLocation)
            return
        }
        let documented = String(document[start.upperBound..<stop.lowerBound])
        #expect(
            documented == markdown,
            "docs/architecture.md's \(name) table differs from the machine; the machine's is:\n\(markdown)",
            sourceLocation: sourceLocation)
    }
}
