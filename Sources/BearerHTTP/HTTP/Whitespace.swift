// A file of its own although short: FoundationEssentials has no `trimmingCharacters(in:)`, and every folder trims.

import BearerJSON

extension StringProtocol {
    /// The text without leading and trailing whitespace (Unicode's, line breaks included).
    package func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}

extension Substring {
    /// Without the optional whitespace around a field value or list element: spaces and tabs only (RFC 9110 §5.6.3),
    /// never other Unicode spaces, so `chunked<U+00A0>` stays an unknown coding.
    package func trimmingOWS() -> Substring {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isOWS($0) }), let last = lastIndex(where: { !isOWS($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
