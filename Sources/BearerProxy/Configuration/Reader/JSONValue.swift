import Foundation

/// A parsed JSON value, decoded with Foundation's `JSONDecoder` so routes.json never meets a hand-written parser.
enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
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
}

extension JSONValue {
    /// Parses a whole document, or explains in one readable line why it is not JSON.
    static func parse(_ data: Data) -> Result<JSONValue, SyntaxError> {
        do {
            return .success(try JSONDecoder().decode(JSONValue.self, from: data))
        } catch {
            return .failure(SyntaxError(explaining: data))
        }
    }

    /// Why a document is not valid JSON, with a line and column where the parser can tell.
    struct SyntaxError: Error, Sendable {
        let message: String

        init(explaining data: Data) {
            // JSONDecoder only says "not valid JSON"; JSONSerialization's error names the offending offset.
            do {
                _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
                message = "not valid JSON"
            } catch {
                let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
                message = detail.map { "not valid JSON: " + Self.readable($0, in: data) } ?? "not valid JSON"
            }
        }

        /// "Invalid value around character 11." becomes "invalid value at line 2, column 8".
        private static func readable(_ detail: String, in data: Data) -> String {
            var text = detail
            if text.hasSuffix(".") { text.removeLast() }
            if let first = text.first { text = first.lowercased() + text.dropFirst() }
            let marker = " around character "
            guard let range = text.range(of: marker), let offset = Int(text[range.upperBound...]) else {
                return text
            }
            let (line, column) = position(ofByte: offset, in: data)
            return text[..<range.lowerBound] + " at line \(line), column \(column)"
        }

        private static func position(ofByte offset: Int, in data: Data) -> (line: Int, column: Int) {
            var line = 1
            var column = 1
            for byte in data.prefix(offset) {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    // Count characters, not bytes: UTF-8 continuation bytes do not start a new column.
                    column += 1
                }
            }
            return (line, column)
        }
    }
}
