/// Turns parsed routes.json into a `Configuration`, recording every problem on the way instead of stopping at
/// the first.
///
/// Each `read…` method returns `nil` when its part is missing or invalid; the problem is already recorded,
/// so the caller only decides what a missing optional part defaults to.
struct ConfigurationReader {
    let problems: ProblemCollector
    /// Consulted only to check that variables named by `…Env` keys are set; values are never copied or shown.
    let environment: [String: String]
    /// Where relative file names resolve.
    let baseDirectory: String

    func read(_ document: JSONValue) -> Configuration? {
        guard let root = ObjectReader(document, at: .root, problems: problems) else { return nil }
        root.rejectUnknownKeys(allowed: ConfigurationKeys.topLevel)
        // `$schema` tells editors where docs/routes.schema.json is; the proxy only checks that it is a string.
        _ = root.string("$schema")

        let listen = readListen(root)
        var context = RouteContext()
        let account = readAccount(root, context: &context)
        context.globalTLS = root.object("tls").flatMap(readTLS) ?? TLSSettings()
        let routes = readRoutes(root, context: context)
        let allowedHosts = readAllowedHosts(root)
        let allowedOrigins = readAllowedOrigins(root)
        let allowRemote = root.bool("allowRemote") ?? false
        let requireKey = root.bool("requireKey") ?? false
        if requireKey {
            // The key itself only ever comes from the environment (SPEC §9); without it nobody could connect.
            requireVariable(Configuration.clientKeyVariable, at: root.path("requireKey"))
        }

        guard let account, let routes else { return nil }
        return Configuration(
            listen: listen ?? .default,
            account: account,
            routes: RouteTable(routes),
            tls: context.globalTLS,
            allowedHosts: allowedHosts ?? [],
            allowedOrigins: allowedOrigins ?? [],
            allowRemote: allowRemote,
            requireKey: requireKey
        )
    }

    private func readListen(_ root: ObjectReader) -> ListenAddress? {
        guard let text = root.string("listen") else { return nil }
        guard let address = ListenAddress(parsing: text) else {
            root.report("listen", "must be \"host:port\" such as \"127.0.0.1:8080\" (IPv6 as \"[::1]:8080\")")
            return nil
        }
        return address
    }

    /// `{"caFile": …}`, globally or on a route.
    func readTLS(_ tls: ObjectReader) -> TLSSettings? {
        tls.rejectUnknownKeys(allowed: ConfigurationKeys.tls)
        return TLSSettings(caFile: readFile(tls, "caFile"))
    }
}
