import Foundation

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// A fresh state directory under the system's temporary directory for one test, removed by `remove()`.
struct StoreScratchDirectory {
    /// The parent of the state directory, so tests can look at modes the state directory gets on creation.
    let root: String
    let state: StateDirectory

    init() throws {
        root = NSTemporaryDirectory() + "bearer-proxy-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        state = StateDirectory(path: root + "/state")
    }

    func store(_ key: String = "account") -> TokenStore {
        TokenStore(directory: state, accountKey: key)
    }

    /// Names in the state directory, sorted; empty when it does not exist.
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: state.path)) ?? []).sorted()
    }

    /// The permission bits of `path`.
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: root)
    }
}
