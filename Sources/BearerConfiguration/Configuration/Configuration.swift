import BearerHTTP
import BearerJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A validated routes.json: where to listen, the account to sign in with, the routes, and the safety settings.
///
/// Built only by `load`/`parse` (or in code from already-valid parts), so every value in it is valid.
public struct Configuration: Sendable {
    /// Where clients connect: TCP addresses and Unix-domain sockets, at least one. Default `127.0.0.1:8080`.
    public var listeners: [Listener]
    public var account: AccountConfiguration
    public var routes: RouteTable
    /// The global CA settings (routes inherit them unless they set their own); default: system roots only.
    public var tls: TLSSettings
    /// Extra names accepted in `Host` besides localhost, 127.0.0.1 and [::1]: lowercased, no port,
    /// IPv6 without brackets. Default none.
    public var allowedHosts: [String]
    /// Browser origins allowed to call the proxy, normalized `scheme://host[:port]` (RFC 6454 §6.2). Default none.
    public var allowedOrigins: [String]
    /// Default false: listening on a non-loopback address needs a client key unless this is true.
    public var allowRemote: Bool
    /// Default false: when true, every request must carry the client key, even on loopback.
    public var requireKey: Bool
    /// Users of this machine, by uid (names are resolved when the file is read), who may connect over loopback
    /// besides the proxy's own user (SPEC §9). Default none.
    public var allowUsers: [UInt32]
    /// The global `requireHeader`; every route's ``Route/requiredHeaders`` begins with it. Default none.
    public var requireHeader: RequiredHeader?

    public init(
        listeners: [Listener] = [.default],
        account: AccountConfiguration,
        routes: RouteTable,
        tls: TLSSettings = TLSSettings(),
        allowedHosts: [String] = [],
        allowedOrigins: [String] = [],
        allowRemote: Bool = false,
        requireKey: Bool = false,
        allowUsers: [UInt32] = [],
        requireHeader: RequiredHeader? = nil
    ) {
        self.listeners = listeners
        self.account = account
        self.routes = routes
        self.tls = tls
        self.allowedHosts = allowedHosts
        self.allowedOrigins = allowedOrigins
        self.allowRemote = allowRemote
        self.requireKey = requireKey
        self.allowUsers = allowUsers
        self.requireHeader = requireHeader
    }

    /// The environment variable holding the client key (`Proxy-Authorization: Bearer <key>`, SPEC §9).
    public static let clientKeyVariable = "BEARER_PROXY_KEY"
}

extension Configuration {
    /// Reads and validates the routes.json at `path`; relative file names inside it resolve against its directory.
    ///
    /// - Parameter environment: the process environment, used to check that variables named by `…Env` keys are set.
    /// - Throws: every problem found, each with its JSON path.
    public static func load(path: String, environment: [String: String]) throws(ConfigurationError) -> Configuration {
        let data: Data
        switch ConfigurationReader.readDocument(at: path) {
        case .success(let contents): data = contents
        case .failure(let error): throw error
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(data, environment: environment, baseDirectory: directory)
    }

    /// Validates routes.json content.
    ///
    /// - Parameters:
    ///   - environment: the process environment, used to check that variables named by `…Env` keys are set.
    ///   - baseDirectory: where relative file names (`caFile`, `certFile`, `keyFile`) resolve; default the
    ///     current directory.
    /// - Throws: every problem found, each with its JSON path.
    public static func parse(
        _ data: Data,
        environment: [String: String],
        baseDirectory: String? = nil
    ) throws(ConfigurationError) -> Configuration {
        let problems = ProblemCollector()
        let directory = baseDirectory ?? FileManager.default.currentDirectoryPath
        let reader = ConfigurationReader(problems: problems, environment: environment, baseDirectory: directory)
        switch JSONValue.parse(data) {
        case .failure(let error):
            throw ConfigurationError(problems: [ConfigurationProblem(path: "$", message: error.message)])
        case .success(let document):
            let configuration = reader.read(document)
            guard problems.isEmpty, let configuration else {
                // A reader that gives up must say why; this only guards against one that forgot to.
                let found =
                    problems.isEmpty ? [ConfigurationProblem(path: "$", message: "is not valid")] : problems.problems
                throw ConfigurationError(problems: found)
            }
            return configuration
        }
    }
}
