/// The three references' verdicts on one stream, and what they add up to: the harness's judgement of a stream.
///
/// - **agree**: every reference accepts the whole stream with the same messages (``FramedMessage/comparable``), the
///   same end, and the same leftover where it can tell.
/// - **refuse**: at least one reference refuses the stream, and wherever two framed a message at the same place
///   they framed it the same way. The strict codec refuses such a stream at the first message not all accept.
/// - **disagree**: two references framed the same place differently (a different method, target, field, body or
///   boundary), or none refused and they still differ in count or end. A disagreement on *framing* is where
///   smuggling lives (RFC 9112 §11.2): whatever the codec does, one of the parsers behind or in front of it reads
///   something else. A disagreement on *persistence* is milder: every message that two references framed they framed
///   alike, but one stops reading the connection (close, upgrade) where another reads on.
struct StreamComparison: Sendable, CustomStringConvertible {
    enum Agreement: String, Sendable, Hashable, CaseIterable {
        case agree, refuse, disagree
    }

    let verdicts: [Reference: StreamVerdict]
    let agreement: Agreement
    /// The messages at the start of the stream that every reference framed and framed the same way: all that a
    /// strict codec may accept from the stream.
    let agreedMessages: [FramedMessage]
    /// What differs, for a report.
    let difference: String?
    /// For a disagreement: whether it is on framing (a message or a boundary), not only on persistence.
    let framingDiffers: Bool

    init(_ verdicts: [Reference: StreamVerdict]) {
        self.verdicts = verdicts
        let messages = verdicts.mapValues { $0.messages.map(\.comparable) }
        let shortest = messages.values.map(\.count).min() ?? 0
        var agreed = 0
        while agreed < shortest, Set(messages.values.map { $0[agreed] }).count == 1 { agreed += 1 }
        agreedMessages = Array((messages.values.first ?? []).prefix(agreed))

        // The first place where two references that both framed a message framed it differently — also past
        // where a third stopped or refused: two parsers that accept different messages are the smuggling pair.
        let longest = messages.values.map(\.count).max() ?? 0
        let firstDifference = (0..<longest).first { index in
            Set(messages.values.filter { $0.count > index }.map { $0[index] }).count > 1
        }
        if let index = firstDifference {
            agreement = .disagree
            framingDiffers = true
            difference =
                "message \(index + 1): "
                + Reference.allCases.compactMap { reference in
                    messages[reference].flatMap { $0.count > index ? "\(reference): \($0[index])" : nil }
                }.joined(separator: " | ")
        } else if verdicts.values.contains(where: { $0.end == .error }) {
            agreement = .refuse
            difference = nil
            framingDiffers = false
        } else {
            let counts = Set(messages.values.map(\.count))
            let ends = Set(verdicts.values.map(\.end))
            let leftovers = Set(verdicts.values.compactMap(\.leftover))
            if counts.count == 1, ends.count == 1, leftovers.count <= 1 {
                agreement = .agree
                difference = nil
                framingDiffers = false
            } else {
                agreement = .disagree
                framingDiffers = Self.boundariesDiffer(Array(verdicts.values))
                difference = Reference.allCases.compactMap { reference in
                    verdicts[reference].map { "\(reference): \($0)" }
                }.joined(separator: " | ")
            }
        }
    }

    /// Whether verdicts that refuse nothing and frame their common messages alike still put a boundary in different
    /// places: a message one completes and another does not, or different bytes left after the same messages. If
    /// not, they differ only in where they stop reading (close, upgrade): persistence.
    static func boundariesDiffer(_ verdicts: [StreamVerdict]) -> Bool {
        let most = verdicts.map(\.messages.count).max() ?? 0
        let stoppedEarly = verdicts.filter { $0.messages.count < most }
        if stoppedEarly.contains(where: { $0.end != .close && $0.end != .upgrade }) { return true }
        for count in Set(verdicts.map(\.messages.count)) {
            let same = verdicts.filter { $0.messages.count == count }
            if Set(same.compactMap(\.leftover)).count > 1 { return true }
            if Set(same.map { $0.end == .incomplete }).count > 1 { return true }
        }
        return false
    }

    /// The references that refused the stream.
    var refusedBy: [Reference] {
        verdicts.filter { $0.value.end == .error }.keys.sorted()
    }

    /// A short name of the outcome for the tallies: `agree`, `refuse (h11)`, `disagree`.
    var outcome: String {
        switch agreement {
        case .agree: "agree"
        case .disagree: framingDiffers ? "disagree (framing)" : "disagree (persistence)"
        case .refuse:
            refusedBy.count == verdicts.count
                ? "refuse (all)" : "refuse (\(refusedBy.map(\.description).joined(separator: ", ")))"
        }
    }

    var description: String {
        "\(outcome): "
            + (difference
                ?? Reference.allCases.compactMap { reference in verdicts[reference].map { "\(reference): \($0)" } }
                .joined(separator: " | "))
    }
}
