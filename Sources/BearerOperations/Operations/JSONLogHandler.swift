import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `--log-format json`: one JSON object per line on stderr — `time`, `level`, `message`, `label` and the metadata
/// as top-level keys — for log shippers.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = Self.plain(value)
        }
        object["time"] = Date().formatted(.iso8601)
        object["level"] = event.level.rawValue
        object["message"] = "\(event.message)"
        object["label"] = label
        guard
            let line = JSONObject.data(object)
        else { return }
        StandardError.write(bytes: Array(line) + [0x0A])
    }

    private static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): "\(convertible)"
        case .array(let values): values.map(plain)
        case .dictionary(let entries): entries.mapValues(plain)
        }
    }
}
