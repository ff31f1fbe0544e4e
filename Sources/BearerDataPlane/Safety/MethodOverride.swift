import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// Method-override conventions: many frameworks (ASP.NET, Express's method-override, Laravel, Spring's
/// `HiddenHttpMethodFilter`, Rails) run a request as the method named in a header or in `_method` instead of the one
/// on the request line. On a route whose `methods` list forbids a method, an override must not smuggle it in
/// (CWE-650; SPEC §9).
enum MethodOverride {
    /// The first method a header or the query's `_method` asks for that `allowed` does not list, uppercased.
    /// `_method` in a form body cannot be seen without reading the body; the query form is what an API client
    /// can send on a GET.
    static func forbidden(request: ClientRequest, query: Substring?, allowed: Set<String>) -> String? {
        // The header spellings frameworks honour: HeaderPolicy's `.methodOverride` rows.
        let span = request.bytes.readableBytesUInt8Span
        var lines = FieldLines(fieldsStart: request.parsed.fieldsStart, length: request.parsed.length)
        while let line = lines.next(in: span) {
            guard HeaderPolicy.rules(of: span, line.field.name).contains(.methodOverride) else { continue }
            for method in request.string(line.field.value).split(separator: ",") {
                let method = method.trimmingOWS().uppercased()
                if !method.isEmpty, !allowed.contains(method) { return method }
            }
        }
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, FormEncoding.decode(parts[0]) == "_method" else { continue }
            // A value that does not decode is compared as sent: a framework would not read it as a method either.
            let method = (FormEncoding.decode(parts[1]) ?? String(parts[1])).uppercased()
            if !method.isEmpty, !allowed.contains(method) { return method }
        }
        return nil
    }
}
