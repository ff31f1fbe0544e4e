import BearerHTTP
import BearerJSON

/// Where a value sits in routes.json, printed the way problems name it: `routes[0].headers.set.X-Tenant`.
package struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    private enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    private var components: [Component] = []

    /// The document itself, printed as `$`.
    static let root = JSONPath()

    package func key(_ name: String) -> JSONPath {
        var copy = self
        copy.components.append(.key(name))
        return copy
    }

    package func index(_ position: Int) -> JSONPath {
        var copy = self
        copy.components.append(.index(position))
        return copy
    }

    package var description: String {
        guard !components.isEmpty else { return "$" }
        var text = ""
        for component in components {
            switch component {
            case .index(let position):
                if text.isEmpty { text = "$" }
                text += "[\(position)]"
            case .key(let name) where Self.isPlain(name):
                text += text.isEmpty ? name : ".\(name)"
            case .key(let name):
                if text.isEmpty { text = "$" }
                text += "[\(Self.quoted(name))]"
            }
        }
        return text
    }

    /// Keys made of letters, digits, `_` and `-` print with a dot; anything else is bracketed and quoted.
    private static func isPlain(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                        || scalar == "-")
            }
    }

    /// `name` as a JSON string literal (also used by the schema tests to write configurations).
    package static func quoted(_ name: String) -> String {
        var text = "\""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    package init() {}
}
