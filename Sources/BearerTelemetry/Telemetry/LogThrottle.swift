import Synchronization

/// At most one log line per key and interval (on the monotonic clock), for events a stranger can cause at will: the
/// line that is let through says how many happened since the last one.
package final class LogThrottle: Sendable {
    private struct Entry {
        var lastLogged: ContinuousClock.Instant
        var suppressed: Int
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let interval: Duration
    /// Keys are forgotten beyond this many (the oldest first), so that varied keys cannot grow the table.
    private let capacity = 256

    package init(interval: Duration) {
        self.interval = interval
    }

    /// Whether a line for `key` is due now; if so, how many events it stands for (this one included).
    package func due(_ key: String, now: ContinuousClock.Instant = .now) -> Int? {
        entries.withLock { entries in
            if var entry = entries[key], now - entry.lastLogged < interval {
                entry.suppressed += 1
                entries[key] = entry
                return nil
            }
            let count = (entries[key]?.suppressed ?? 0) + 1
            if entries[key] == nil, entries.count >= capacity,
                let oldest = entries.min(by: { $0.value.lastLogged < $1.value.lastLogged })?.key
            {
                entries.removeValue(forKey: oldest)
            }
            entries[key] = Entry(lastLogged: now, suppressed: 0)
            return count
        }
    }
}
