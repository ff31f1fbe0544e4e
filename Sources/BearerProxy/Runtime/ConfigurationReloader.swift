import ServiceLifecycle
import UnixSignals

/// Reloads `routes.json` on every SIGHUP, as a `Service` next to the proxy (SPEC §10).
public struct ConfigurationReloader: Service {
    let proxy: RunningProxy
    let path: String

    public init(proxy: RunningProxy, path: String) {
        self.proxy = proxy
        self.path = path
    }

    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await proxy.reload(from: path)
        }
    }
}
