#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Untyped JSON — `[String: Any]` trees of `String`, `Int`, `Double`, `Bool`, ``JSONNull``, arrays and objects — the
/// shape identity providers' answers are read in and the proxy's own JSON is built in. Parsed and written through
/// ``JSONValue``: FoundationEssentials has no `JSONSerialization`, and full Foundation costs about 10 MiB of resident
/// memory (docs/benchmarks.md).
package enum JSONObject {
    /// The document as an untyped tree, or nil when it is not JSON.
    package static func parse(_ data: Data) -> Any? {
        guard case .success(let value) = JSONValue.parse(data) else { return nil }
        return value.untyped
    }

    /// The document when it is a JSON object.
    package static func dictionary(_ data: Data) -> [String: Any]? {
        parse(data) as? [String: Any]
    }

    /// The tree's bytes (keys sorted, `/` unescaped, indented when `pretty`), or nil when it holds something JSON has
    /// no form for (a non-finite number, a `Date`, …).
    package static func data(_ object: Any, pretty: Bool = false) -> Data? {
        JSONValue(untyped: object)?.encoded(pretty: pretty)
    }

    /// A JSON number, integral or not, as a `Double`.
    package static func number(_ value: Any?) -> Double? {
        switch value {
        case let number as Int: Double(number)
        case let number as Double: number
        default: nil
        }
    }

    /// A JSON number that is a whole number, as an `Int`.
    package static func integer(_ value: Any?) -> Int? {
        switch value {
        case let number as Int: number
        case let number as Double: Int(exactly: number)
        default: nil
        }
    }
}

/// JSON's `null` in an untyped tree.
package struct JSONNull: Sendable, Hashable {

    package init() {}
}

extension JSONValue {
    /// The value as an untyped tree for ``JSONObject``.
    var untyped: Any {
        switch self {
        case .null: JSONNull()
        case .bool(let value): value
        case .integer(let value): value
        case .number(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.untyped)
        case .object(let members): members.mapValues(\.untyped)
        }
    }

    /// An untyped tree as a value; nil when something in it has no JSON form.
    package init?(untyped object: Any) {
        switch object {
        case let value as JSONValue: self = value
        case is JSONNull: self = .null
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(value)
        case let value as any BinaryInteger:
            guard let integer = Int(exactly: value) else { return nil }
            self = .integer(integer)
        case let value as Double:
            guard value.isFinite else { return nil }
            self = .number(value)
        case let value as String: self = .string(value)
        case let value as Substring: self = .string(String(value))
        case let members as [String: Any]:
            var converted: [String: JSONValue] = [:]
            for (key, member) in members {
                guard let value = JSONValue(untyped: member) else { return nil }
                converted[key] = value
            }
            self = .object(converted)
        case let elements as [Any]:
            var converted: [JSONValue] = []
            for element in elements {
                guard let value = JSONValue(untyped: element) else { return nil }
                converted.append(value)
            }
            self = .array(converted)
        default:
            return nil
        }
    }
}
