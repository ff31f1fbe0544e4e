#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a document stops being JSON (RFC 8259), said for people: "expected a value at line 3, column 12".
///
/// Only an explainer: `JSONDecoder` decides whether a document is JSON and reads it; this runs after it refused one,
/// because FoundationEssentials' decoder says no more than "not valid JSON" (full Foundation's `JSONSerialization`
/// named an offset, but linking it costs about 10 MiB of resident memory — docs/benchmarks.md). When it finds nothing
/// (the decoder refused for another reason, such as a number out of range), the caller says only "not valid JSON". It
/// accepts what the decoder accepts beyond RFC 8259 — a comma before `]` or `}` — so it never blames a document the
/// decoder reads. Iterative, so no nesting depth can exhaust the stack.
enum JSONSyntax {
    static func firstError(in data: Data) -> String? {
        guard data.contains(where: { !$0.isJSONWhitespace }) else { return "the document is empty" }
        var scanner = Scanner(bytes: Array(data))
        guard let (problem, offset) = scanner.firstError() else { return nil }
        let (line, column) = position(ofByte: offset, in: data)
        return "\(problem) at line \(line), column \(column)"
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        /// The open containers, innermost last: `{` or `[`.
        var open: [UInt8] = []

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while current?.isJSONWhitespace == true { index += 1 }
        }

        mutating func firstError() -> (String, Int)? {
            var expectsValue = true
            while true {
                skipWhitespace()
                if expectsValue {
                    guard let byte = current else { return ("unexpected end of the document", index) }
                    if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                        index += 1
                        skipWhitespace()
                        if current == (byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                            index += 1
                            expectsValue = false
                            continue
                        }
                        open.append(byte)
                        if byte == UInt8(ascii: "{"), let problem = memberName() { return (problem, index) }
                    } else {
                        if let problem = scalar() { return (problem, index) }
                        expectsValue = false
                    }
                    continue
                }
                // After a value: close a container or go on to its next element.
                guard let container = open.last else {
                    return current == nil ? nil : ("unexpected text after the document", index)
                }
                let close = container == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                guard let byte = current else { return ("unexpected end of the document", index) }
                if byte == close {
                    open.removeLast()
                    index += 1
                } else if byte == UInt8(ascii: ",") {
                    index += 1
                    skipWhitespace()
                    // A comma before the close is accepted, because the decoder accepts it (the differential test).
                    if current == close { continue }
                    expectsValue = true
                    if container == UInt8(ascii: "{"), let problem = memberName() { return (problem, index) }
                } else {
                    return ("expected ',' or '\(Character(Unicode.Scalar(close)))'", index)
                }
            }
        }

        /// A string, number or literal; nil when it is well formed.
        mutating func scalar() -> String? {
            guard let byte = current else { return "unexpected end of the document" }
            switch byte {
            case UInt8(ascii: "\""):
                return string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return number()
            default:
                for literal in ["true", "false", "null"] where bytes[index...].starts(with: literal.utf8) {
                    index += literal.utf8.count
                    return nil
                }
                return "expected a value"
            }
        }

        /// An object member's name and its colon; nil when both are there.
        mutating func memberName() -> String? {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                return current == nil ? "unexpected end of the document" : "expected a string naming a member"
            }
            if let problem = string() { return problem }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                return current == nil ? "unexpected end of the document" : "expected ':'"
            }
            index += 1
            return nil
        }

        mutating func string() -> String? {
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return nil
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { return "unexpected end of the document" }
                    if escaped == UInt8(ascii: "u") {
                        let digits = bytes[(index + 1)...].prefix(4)
                        guard digits.count == 4, digits.allSatisfy(\.isHexDigit) else {
                            return "invalid \\u escape in a string"
                        }
                        index += 5
                    } else if Array("\"\\/bfnrt".utf8).contains(escaped) {
                        index += 1
                    } else {
                        return "invalid escape in a string"
                    }
                case 0..<0x20:
                    return "control character in a string"
                default:
                    index += 1
                }
            }
            return "unexpected end of the document"
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() -> String? {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, first.isDigit else { return "invalid number" }
            index += 1
            if first != UInt8(ascii: "0") { digits() }
            if current == UInt8(ascii: ".") {
                index += 1
                guard current?.isDigit == true else { return "invalid number" }
                digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard current?.isDigit == true else { return "invalid number" }
                digits()
            }
            return nil
        }

        mutating func digits() {
            while current?.isDigit == true { index += 1 }
        }
    }

    /// Line and column of a byte, counting characters, not bytes: UTF-8 continuation bytes start no column.
    private static func position(ofByte offset: Int, in data: Data) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    /// Its own check rather than `HTTP/`'s `hexDigitValue`: JSON sits below HTTP.
    fileprivate var isHexDigit: Bool {
        isDigit || (self | 0x20 >= UInt8(ascii: "a") && self | 0x20 <= UInt8(ascii: "f"))
    }
    /// RFC 8259 §2: space, tab, line feed, carriage return.
    fileprivate var isJSONWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}
