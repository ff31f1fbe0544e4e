/// One message as a parser saw it, in bytes, so that the two parsers can be compared field for field.
struct DecodedMessage: Equatable, CustomStringConvertible {
    struct Field: Equatable {
        var name: [UInt8]
        var value: [UInt8]
    }

    /// A request line or a status line, and the fields after it.
    struct Head: Equatable {
        /// Request: method, target; response: the status code.
        var start: [String]
        var minorVersion: Int
        var fields: [Field]
    }

    /// Responses: the informational heads first, then the final one; requests: one.
    var heads: [Head]
    var body: [UInt8]
    var trailers: [Field]

    var description: String {
        let heads = self.heads.map { head in
            head.start.joined(separator: " ") + " 1.\(head.minorVersion) "
                + head.fields.map {
                    "\(String(decoding: $0.name, as: UTF8.self))=\(String(decoding: $0.value, as: UTF8.self))"
                }
                .joined(separator: "; ")
        }
        return "\(heads) body \(body.count) bytes, trailers \(trailers.count)"
    }
}

/// What a parser made of an input.
enum Outcome: Equatable {
    /// It refused the input (why, for the report).
    case refused(String)
    /// The input ended before the first message did, and nothing was refused.
    case incomplete
    /// The first message, complete.
    case message(DecodedMessage)
}
