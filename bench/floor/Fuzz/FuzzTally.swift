/// What a fuzz run did, so that a run which exercised nothing (every input refused at its first byte, say) shows.
struct FuzzTally: CustomStringConvertible {
    enum Outcome {
        case accepted(fields: Int)
        case refused
        case incomplete
    }

    private var requests = (accepted: 0, refused: 0, incomplete: 0, fields: 0)
    private var responses = (accepted: 0, refused: 0, incomplete: 0, fields: 0)

    mutating func note(request outcome: Outcome) { Self.add(outcome, to: &requests) }
    mutating func note(response outcome: Outcome) { Self.add(outcome, to: &responses) }

    private static func add(
        _ outcome: Outcome, to counts: inout (accepted: Int, refused: Int, incomplete: Int, fields: Int)
    ) {
        switch outcome {
        case .accepted(let fields):
            counts.accepted += 1
            counts.fields += fields
        case .refused: counts.refused += 1
        case .incomplete: counts.incomplete += 1
        }
    }

    var description: String {
        "requests \(requests.accepted) accepted (\(requests.fields) field lines), \(requests.refused) refused, "
            + "\(requests.incomplete) incomplete; responses \(responses.accepted) accepted "
            + "(\(responses.fields) field lines), \(responses.refused) refused, \(responses.incomplete) incomplete"
    }
}
