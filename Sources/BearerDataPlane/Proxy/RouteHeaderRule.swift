import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// One of a route's own rules for the request head it forwards, compiled once into its ``RouteBinding`` from
/// `headers.set` and `forwardedHeaders` (#23 item 4). ``Forwarding`` applies the list in order after the client's
/// fields are copied (the route's `headers.remove` applies during the copy) and before the proxy's own
/// `Authorization` and `X-Request-Id`, which no rule can name (``HeaderRules/refusal(for:)``).
package enum RouteHeaderRule: Sendable, Equatable {
    /// Set this field, replacing any the client sent.
    case set(name: String, value: String)
    /// `X-Forwarded-For` with the client's address, when known (the route asked for forwarded headers).
    case forwardedFor
    /// `X-Forwarded-Proto: http`: the client reached the proxy over plain HTTP.
    case forwardedProto
    /// `X-Forwarded-Host` with the client's `Host`.
    case forwardedHost

    /// The route's rules, in the order they apply.
    package static func compile(_ route: Route) -> [RouteHeaderRule] {
        var rules = route.headers.set.map { RouteHeaderRule.set(name: $0.name, value: $0.value) }
        if route.forwardedHeaders { rules += [.forwardedFor, .forwardedProto, .forwardedHost] }
        return rules
    }

    /// Applies this rule to `headers`, the upstream request's, for a client at `clientAddress` that sent `client`.
    package func apply(to headers: inout HTTPHeaders, client: HTTPRequestHead, clientAddress: String?) {
        switch self {
        case .set(let name, let value):
            headers.replaceOrAdd(name: name, value: value)
        case .forwardedFor:
            if let clientAddress { headers.add(name: "x-forwarded-for", value: clientAddress) }
        case .forwardedProto:
            headers.add(name: "x-forwarded-proto", value: "http")
        case .forwardedHost:
            if let host = client.headers.first(name: "host") { headers.add(name: "x-forwarded-host", value: host) }
        }
    }
}
