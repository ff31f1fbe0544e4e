import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore

/// One structured line per request (SPEC §10): request id, method, route, path without query values, status,
/// upstream status, duration and bytes — never a header value, so never a token or a key.
enum AccessLog {
    package static func record(_ exchange: Exchange, status: UInt, logger: Logger) {
        guard logger.logLevel <= .info else { return }
        var metadata: Logger.Metadata = [
            "request-id": .string(exchange.id),
            "method": .string(exchange.request.method.rawValue),
            "route": .string(exchange.routeLabel),
            "path": .string(exchange.target.map { redactedTarget(path: $0.path, query: $0.query) } ?? "-"),
            "status": .stringConvertible(status),
            "duration-ms": .stringConvertible((NIODeadline.now() - exchange.started).nanoseconds / 1_000_000),
            "bytes-in": .stringConvertible(exchange.bytesIn),
            "bytes-out": .stringConvertible(exchange.bytesOut),
        ]
        if let upstreamStatus = exchange.upstreamStatus {
            metadata["upstream-status"] = .stringConvertible(upstreamStatus)
        }
        if let refusal = exchange.refusal { metadata["refused"] = .string(refusal) }
        logger.info("request", metadata: metadata)
    }

    /// The path with each query parameter's value removed (`/x?code=secret&a=1` → `/x?code=&a=`): values can be
    /// credentials (an OAuth `code`, an API key), names cannot.
    static func redactedTarget(path: Substring, query: Substring?) -> String {
        guard let query else { return String(path) }
        let names = query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0 + "=" } ?? ""
        }
        return path + "?" + names.joined(separator: "&")
    }
}
