import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// One of a route's own rules for the request head it forwards, compiled once into its ``RouteBinding`` from
/// `headers.set` and `forwardedHeaders` (docs/configuration.md). ``Forwarding`` applies the list in order after the
/// client's fields are copied (the route's `headers.remove` applies during the copy) and before the proxy's own
/// `Authorization` and `X-Request-Id`, which no rule can name (``HeaderRules/refusal(for:)``).
enum RouteHeaderRule: Sendable, Equatable {
    /// Set this field, replacing any the client sent.
    case set(name: String, value: String)
    /// `X-Forwarded-For` with the client's address, when known (the route asked for forwarded headers).
    case forwardedFor
    /// `X-Forwarded-Proto: http`: the client reached the proxy over plain HTTP.
    case forwardedProto
    /// `X-Forwarded-Host` with the client's `Host`.
    case forwardedHost

    /// The route's rules, in the order they apply.
    static func compile(_ route: Route) -> [RouteHeaderRule] {
        var rules = route.headers.set.map { RouteHeaderRule.set(name: $0.name, value: $0.value) }
        if route.forwardedHeaders { rules += [.forwardedFor, .forwardedProto, .forwardedHost] }
        return rules
    }

    /// Writes this rule's field line into the upstream request's head, for a client at `clientAddress` whose
    /// `Host` said `clientHost`.
    package func write(into out: inout HeadBytes, clientHost: String?, clientAddress: String?) {
        switch self {
        case .set(let name, let value):
            Self.writeLine(name, value, into: &out)
        case .forwardedFor:
            if let clientAddress { Self.writeLine("x-forwarded-for", clientAddress, into: &out) }
        case .forwardedProto:
            out.append("x-forwarded-proto: http\r\n")
        case .forwardedHost:
            if let clientHost { Self.writeLine("x-forwarded-host", clientHost, into: &out) }
        }
    }

    private static func writeLine(_ name: String, _ value: String, into out: inout HeadBytes) {
        out.append(contentsOf: name)
        out.append(": ")
        out.append(contentsOf: value)
        out.append("\r\n")
    }
}
