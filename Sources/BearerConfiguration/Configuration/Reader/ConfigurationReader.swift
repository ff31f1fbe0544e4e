// The reader, the RouteContext it hands from the account to the routes, and the top-level keys it reads itself
// (listen, tls, allowedHosts, allowedOrigins).

import BearerHTTP
import BearerJSON

/// Turns parsed routes.json into a `Configuration`, recording every problem on the way instead of stopping at
/// the first.
///
/// Each `read…` method returns `nil` when its part is missing or invalid; the problem is already recorded,
/// so the caller only decides what a missing optional part defaults to.
package struct ConfigurationReader {
    package let problems: ProblemCollector
    /// Consulted only to check that variables named by `…Env` keys are set; values are never copied or shown.
    package let environment: [String: String]
    /// Where relative file names resolve.
    let baseDirectory: String

    package func read(_ document: JSONValue) -> Configuration? {
        guard let root = ObjectReader(document, at: .root, problems: problems) else { return nil }
        root.rejectUnknownKeys(allowed: ConfigurationKeys.topLevel)
        // `$schema` tells editors where docs/routes.schema.json is; the proxy only checks that it is a string.
        _ = root.string("$schema")

        let listen = readListen(root)
        var context = RouteContext()
        let account = readAccount(root, context: &context)
        context.globalTLS = root.object("tls").flatMap(readTLS) ?? TLSSettings()
        context.requiredHeader = root.object("requireHeader").flatMap(readRequiredHeader)
        let routes = readRoutes(root, context: context)
        let allowedHosts = readAllowedHosts(root)
        let allowedOrigins = readAllowedOrigins(root)
        let allowRemote = root.bool("allowRemote") ?? false
        let requireKey = root.bool("requireKey") ?? false
        let allowUsers = readAllowUsers(root)
        if requireKey {
            // The key itself only ever comes from the environment (SPEC §9); without it nobody could connect.
            requireVariable(Configuration.clientKeyVariable, at: root.path("requireKey"))
        }

        guard let account, let routes else { return nil }
        return Configuration(
            listeners: listen ?? [.default],
            account: account,
            routes: RouteTable(routes),
            tls: context.globalTLS,
            allowedHosts: allowedHosts ?? [],
            allowedOrigins: allowedOrigins ?? [],
            allowRemote: allowRemote,
            requireKey: requireKey,
            allowUsers: allowUsers ?? [],
            requireHeader: context.requiredHeader
        )
    }

    /// `listen`: one `host:port` or `unix:PATH`, or an array of them (SPEC §9).
    private func readListen(_ root: ObjectReader) -> [Listener]? {
        guard let value = root.value("listen") else { return nil }
        let written: [(text: String, path: JSONPath)]
        switch value {
        case .array:
            guard let elements = root.stringElements("listen") else { return nil }
            written = elements.map { ($0.value, $0.path) }
        case .string(let text):
            written = [(text, root.path("listen"))]
        default:
            root.report("listen", "must be a string (\"host:port\" or \"unix:PATH\") or an array of them")
            return nil
        }
        var listeners: [Listener] = []
        for (text, path) in written {
            do {
                let listener = try Listener.parse(
                    text, runtimeDirectory: environment["XDG_RUNTIME_DIR"], relativeTo: baseDirectory)
                if listeners.contains(listener) {
                    problems.report(path, "\"\(listener)\" is listed twice")
                    continue
                }
                listeners.append(listener)
            } catch {
                problems.report(path, "\(error)")
            }
        }
        return listeners.count == written.count ? listeners : nil
    }

    /// `{"caFile": …}`, globally or on a route.
    func readTLS(_ tls: ObjectReader) -> TLSSettings? {
        tls.rejectUnknownKeys(allowed: ConfigurationKeys.tls)
        return TLSSettings(caFile: readFile(tls, "caFile"))
    }

    package init(problems: ProblemCollector, environment: [String: String], baseDirectory: String) {
        self.problems = problems
        self.environment = environment
        self.baseDirectory = baseDirectory
    }
}

/// What reading the routes needs to know from the rest of the file: the flow decides which route keys apply.
///
/// Fields stay `nil` when that part of the account is missing or invalid; flow-specific route checks are then
/// skipped rather than guessed.
struct RouteContext {
    package var flow: AccountFlow?
    /// For the firebase flow: the sign-in provider.
    var firebaseProvider: FirebaseAccount.ProviderName?
    /// For the firebase flow with Microsoft: the account's scopes, which `provider-access` routes draw from.
    var firebaseScopes: ScopeSet?
    /// Inherited by routes without their own `tls`.
    var globalTLS = TLSSettings()
    /// The global `requireHeader`, which every route checks besides its own.
    var requiredHeader: RequiredHeader?
    /// The account's `tokenType` when it is an OAuth flow (nil for any other: its tokens are bearer tokens).
    var accountTokenType: TokenTypePreference?
}

extension ConfigurationReader {
    /// `allowedHosts`: exact host names or IP addresses accepted in `Host` (any port), lowercased, IPv6 unbracketed.
    func readAllowedHosts(_ root: ObjectReader) -> [String]? {
        guard let elements = root.stringElements("allowedHosts", allowEmpty: true) else { return nil }
        var hosts: [String] = []
        for (text, path) in elements {
            var host = Substring(text.lowercased())
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            if host.contains("*") {
                problems.report(path, "must be an exact host name (wildcards are not supported)")
            } else if HostName.isValid(host) {
                if !hosts.contains(String(host)) { hosts.append(String(host)) }
            } else if let (_, port) = try? HostName.authority(host), port != nil {
                problems.report(path, "must be a host name without a port (every port is accepted)")
            } else {
                problems.report(path, "is not a valid host name or IP address")
            }
        }
        return hosts
    }

    /// `allowedOrigins`: browser origins allowed to call the proxy, normalized to `scheme://host[:port]`.
    func readAllowedOrigins(_ root: ObjectReader) -> [String]? {
        guard let elements = root.stringElements("allowedOrigins", allowEmpty: true) else { return nil }
        var origins: [String] = []
        for (text, path) in elements {
            switch Self.origin(text) {
            case .success(let origin): if !origins.contains(origin) { origins.append(origin) }
            case .failure(let problem): problems.report(path, problem.message)
            }
        }
        return origins
    }

    /// Why a string is not an origin; `message` is the problem text.
    package struct OriginProblem: Error {
        package let message: String
    }

    /// The ASCII serialization of an origin (RFC 6454 §6.2): lowercased, default port omitted, no path.
    package static func origin(_ text: String) -> Result<String, OriginProblem> {
        if text == "*" {
            return .failure(OriginProblem(message: "must be an exact origin; \"*\" would let any web page in"))
        }
        if text == "null" {
            return .failure(OriginProblem(message: "\"null\" is not allowed (sandboxed and file: pages all send it)"))
        }
        guard let url = try? URLParts(parsing: text) else {
            return .failure(OriginProblem(message: "must be an origin such as \"http://localhost:3000\""))
        }
        guard let scheme = Upstream.Scheme(rawValue: url.scheme) else {
            return .failure(OriginProblem(message: "must be an http or https origin"))
        }
        guard url.userinfo == nil, url.query == nil, url.fragment == nil, url.path.isEmpty || url.path == "/" else {
            return .failure(OriginProblem(message: "must be only scheme://host[:port], without a path (RFC 6454)"))
        }
        let port = url.port.flatMap { $0 == scheme.defaultPort ? nil : ":\($0)" } ?? ""
        return .success("\(scheme.rawValue)://\(Authority.bracketed(url.host))\(port)")
    }
}
