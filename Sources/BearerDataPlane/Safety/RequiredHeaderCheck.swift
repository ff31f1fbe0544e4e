import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// A route's ``RequiredHeader`` as the data plane checks it on every request (SPEC §9), built once per configuration:
/// the value, when one is required, held as a ``ClientKey`` — compared in constant time, whatever the length of what a
/// client sends.
struct RequiredHeaderCheck: Sendable {
    package let name: String
    /// ``name`` lowercased, as the request's field names are compared with it.
    private let lowercasedName: String
    private let value: ClientKey?

    init(_ header: RequiredHeader) {
        name = header.name
        lowercasedName = header.name.lowercased()
        value = header.value.map(ClientKey.init)
    }

    /// Whether `headers` carry the header exactly once, non-empty, with the required value when there is one. Two
    /// fields of the name are refused: a check and a backend could each read another one.
    func isSatisfied(by request: ClientRequest) -> Bool {
        // Names are compared without case (RFC 9110 §5.1).
        let values = request.values(lowercasedName)
        guard values.count == 1, let sent = values.first, !sent.isEmpty else { return false }
        return value?.matches(sent) ?? true
    }
}
