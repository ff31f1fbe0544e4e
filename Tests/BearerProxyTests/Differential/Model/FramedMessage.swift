import Foundation

/// One message as a reference parser framed it out of a byte stream: the start line, the field lines, the body
/// bytes after any chunked framing is removed (RFC 9112 §7.1), and the trailer fields.
struct FramedMessage: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// Requests: the method and the request target exactly as sent (RFC 9112 §3).
    var method: String?
    var target: String?
    /// Responses: the status code (RFC 9112 §4).
    var status: Int?
    /// `HTTP/1.1`, `HTTP/1.0`.
    var version: String
    var fields: [FieldLine]
    var body: [UInt8]
    var trailers: [FieldLine]

    private enum CodingKeys: String, CodingKey {
        case method, target, status, version, fields, body, trailers
    }

    init(
        method: String? = nil, target: String? = nil, status: Int? = nil, version: String, fields: [FieldLine],
        body: [UInt8], trailers: [FieldLine]
    ) {
        self.method = method
        self.target = target
        self.status = status
        self.version = version
        self.fields = fields
        self.body = body
        self.trailers = trailers
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decodeIfPresent(String.self, forKey: .method)
        target = try container.decodeIfPresent(String.self, forKey: .target)
        status = try container.decodeIfPresent(Int.self, forKey: .status)
        version = try container.decode(String.self, forKey: .version)
        fields = try container.decode([FieldLine].self, forKey: .fields)
        trailers = try container.decode([FieldLine].self, forKey: .trailers)
        let encoded = try container.decode(String.self, forKey: .body)
        guard let body = Data(base64Encoded: encoded) else {
            throw DecodingError.dataCorruptedError(forKey: .body, in: container, debugDescription: "not base64")
        }
        self.body = Array(body)
    }

    /// The message as the references are compared on it: field lines normalized (``FieldLine/normalized``) and
    /// grouped by name — each name's values keep their order, the order across names does not count, because
    /// net/http keeps fields in a map. (Order within a name is what a list-valued field means, RFC 9110 §5.3.)
    var comparable: FramedMessage {
        var message = self
        message.fields = Self.grouped(fields)
        message.trailers = Self.grouped(trailers)
        return message
    }

    /// Lines sorted by name, each name's values in the order they came.
    static func group(_ lines: [FieldLine]) -> [FieldLine] {
        lines.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }.map(\.element)
    }

    private static func grouped(_ lines: [FieldLine]) -> [FieldLine] {
        var normalized = lines.map(\.normalized)
        // Identical Content-Length values, in one line or several, count as one (RFC 9110 §8.6 lets a recipient
        // replace them with one, and h11 does): the length is what frames the message, not how often it is said.
        let lengths = normalized.filter { $0.name == "content-length" }
            .flatMap { $0.value.split(separator: ",").map { String($0).trimmingWhitespace } }
        if lengths.count > 1, Set(lengths).count == 1 {
            let first = normalized.firstIndex { $0.name == "content-length" }!
            normalized.removeAll { $0.name == "content-length" }
            normalized.insert(FieldLine(name: "content-length", value: lengths[0]), at: min(first, normalized.count))
        }
        // Stable: sorted by name, each name's values in the order they came.
        return normalized.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }
            .map(\.element)
    }

    var description: String {
        let start = status.map { "\(version) \($0)" } ?? "\(method ?? "?") \(target ?? "?") \(version)"
        let body = String(decoding: self.body.prefix(40), as: UTF8.self).debugDescription
        return "\(start) [\(fields.map(\.description).joined(separator: "; "))] body \(self.body.count) \(body)"
            + (trailers.isEmpty ? "" : " trailers [\(trailers.map(\.description).joined(separator: "; "))]")
    }
}
