import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// The DPoP key (RFC 9449) of the sign-in a discovered route uses now, as the route's token cache finds it for the
/// data plane's proofs: through `discovered-routes.json`, read again whenever the key kept does not match — a
/// `login ROUTE` in another process may have replaced the sign-in, and with it the key. Never creates a key: one
/// that is not stored belongs to no token.
package struct DiscoveredRouteProofKeys: DPoPKeySource {
    let store: DiscoveredSignInStore
    let upstream: String

    package init(store: DiscoveredSignInStore, upstream: String) {
        self.store = store
        self.upstream = upstream
    }

    package func proofKey(thumbprint: String) -> DPoPKey? {
        guard let key = try? store.routeKey(upstream: upstream),
            let proofKey = store.proofKeyFile(key).storedKey(), proofKey.thumbprint == thumbprint
        else { return nil }
        return proofKey
    }
}

extension DiscoveredSignInStore {
    /// The DPoP key file of the sign-in under `key`: `dpop-discovered-signin-<h>.json` beside the sign-in's own file,
    /// with the account key's rules (``DPoPKeyFile``: 0600, atomic, one key for every process of the machine).
    package func proofKeyFile(_ key: DiscoveredSignInKey) -> DPoPKeyFile {
        DPoPKeyFile(directory: directory, fileName: signInFileName(key))
    }
}
