#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A JSON value, read and written with `JSONDecoder`/`JSONEncoder` so no document meets a hand-written parser.
/// routes.json is read as one; untyped trees (``JSONObject``) go through it to and from bytes.
package enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Bool before the numbers and Int before Double, so `true` stays a boolean and `8080` an integer.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// Parses a whole document, or explains in one readable line why it is not JSON.
    package static func parse(_ data: Data) -> Result<JSONValue, SyntaxError> {
        do {
            return .success(try JSONDecoder().decode(JSONValue.self, from: data))
        } catch {
            return .failure(SyntaxError(explaining: data))
        }
    }

    /// The document's bytes: keys sorted and `/` left unescaped, so the same value always reads the same;
    /// indented for people when `pretty`.
    package func encoded(pretty: Bool = false) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { encoder.outputFormatting.insert(.prettyPrinted) }
        // Cannot fail: every case encodes, and non-finite numbers never come out of a parse or ``JSONObject``.
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }

    /// Why a document is not valid JSON, with a line and column where it stops being JSON.
    package struct SyntaxError: Error, Sendable {
        package let message: String

        init(explaining data: Data) {
            // JSONDecoder only says "not valid JSON"; JSONSyntax finds where.
            message = JSONSyntax.firstError(in: data).map { "not valid JSON: " + $0 } ?? "not valid JSON"
        }
    }
}
