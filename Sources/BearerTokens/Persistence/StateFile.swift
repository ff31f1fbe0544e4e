import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One JSON file in the state directory holding one `Value`, under the rules of the token cache file (SPEC §7):
/// written atomically at 0600 in the 0700 directory, every change a read-modify-write under the directory's lock,
/// and a file that does not decode renamed aside (`<name>.corrupt-<time>`) rather than deleted or trusted. The
/// discovered routes' registrations, sign-ins and route index (SPEC §6.3) use it.
struct StateFile<Value: Codable & Equatable & Sendable>: Sendable {
    package let directory: StateDirectory
    /// A plain file name (no `/`).
    package let name: String

    package var path: String { directory.path + "/" + name }

    /// The value, or nil when there is no file — or when it did not decode, in which case it has been set aside.
    package func load() throws(StateError) -> Value? {
        guard let data = try directory.read(name) else { return nil }
        if let value = try? JSONDecoder().decode(Value.self, from: data) { return value }
        return try directory.withLock { () throws(StateError) in try readOrSetAside() }
    }

    /// Applies `change` to the value on disk (nil: none) and writes the result under the lock; nil deletes the file.
    @discardableResult
    package func update<T>(_ change: (inout Value?) -> T) throws(StateError) -> T {
        try directory.withLock { () throws(StateError) in
            let before = try readOrSetAside()
            var after = before
            let result = change(&after)
            guard after != before else { return result }
            if let after {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                guard let data = try? encoder.encode(after) else {
                    throw .cannotWrite(path: path, reason: "the value cannot be encoded")
                }
                try directory.writeUnlocked(data, to: name)
            } else if unlink(path) != 0 && errno != ENOENT {
                throw .cannotWrite(path: path, reason: String(cString: strerror(errno)))
            }
            return result
        }
    }

    /// The caller holds the lock.
    private func readOrSetAside() throws(StateError) -> Value? {
        guard let data = try directory.read(name) else { return nil }
        if let value = try? JSONDecoder().decode(Value.self, from: data) { return value }
        let now: String = Date().formatted(.iso8601)
        let stamp = now.filter { $0 != "-" && $0 != ":" }
        var target = path + ".corrupt-" + stamp
        var attempt = 1
        while FileManager.default.fileExists(atPath: target) {
            attempt += 1
            target = path + ".corrupt-\(stamp)-\(attempt)"
        }
        guard rename(path, target) == 0 else {
            throw .cannotWrite(
                path: path, reason: "cannot set it aside as \(target): \(String(cString: strerror(errno)))")
        }
        return nil
    }
}
