import Logging
import Synchronization

/// A swift-log handler that keeps every line (with its metadata) so a test can scan all output for secrets.
struct CapturingLogHandler: LogHandler {
    final class Store: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        store.append("\(event.level) \(event.message) \(merged) \(event.source)")
    }

    /// A trace-level logger writing into `store`.
    static func logger(into store: Store) -> Logger {
        var logger = Logger(label: "capture") { _ in CapturingLogHandler(store: store) }
        logger.logLevel = .trace
        return logger
    }
}
