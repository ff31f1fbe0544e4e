import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where discovered routes' registrations and sign-ins live in the state directory (SPEC §6.3):
/// `discovered-client-<h>.json` per authorization server (its dynamic registration),
/// `discovered-signin-<h>.json` per (issuer, client, resource), `discovered-routes.json` (upstream → key) and
/// `discovered-declined-<h>.json` per authorization server (a sign-in `serve` opened there was declined,
/// `DiscoveredSignInStore+Declines.swift`).
/// `<h>` is a hash of the key, so a file name never carries a server's text; each file also holds its key in
/// full, and a file whose key is not the one asked for is not used.
public struct DiscoveredSignInStore: Sendable {
    public let directory: StateDirectory

    public init(directory: StateDirectory) {
        self.directory = directory
    }

    /// The dynamic registration at `issuer`, if it is still for that issuer.
    package func registration(issuer: String) throws(StateError) -> PersistedRegistration? {
        try registrationFile(issuer).load().flatMap { $0.issuer == issuer ? $0 : nil }
    }

    package func saveRegistration(_ registration: PersistedRegistration) throws(StateError) {
        try registrationFile(registration.issuer).update { $0 = registration }
    }

    /// The name of the lock that lets one interactive sign-in with `issuer` run on this machine at a time.
    package func signInLockName(issuer: String) -> String {
        "discovered-login-" + Self.hash(["login", issuer])
    }

    /// The lock a `login ROUTE` holds while it signs in for the route of `upstream`: a `serve` that finds no usable
    /// sign-in for that route waits on it for the one being made, instead of answering at once.
    package func routeSignInLock(upstream: String) -> RedemptionLock {
        RedemptionLock(directory: directory, fileName: "discovered-route-" + Self.hash(["route", upstream]))
    }

    /// Forgets the registration at `issuer` (stale: `invalid_client`, or `logout --forget-registration`).
    package func dropRegistration(issuer: String) throws(StateError) {
        try registrationFile(issuer).update { $0 = nil }
    }

    package func signIn(_ key: DiscoveredSignInKey) throws(StateError) -> PersistedDiscoveredSignIn? {
        try signInFile(key).load().flatMap { $0.key == key ? $0 : nil }
    }

    /// Read-modify-write of the sign-in under `key`; a file holding another key is treated as absent.
    @discardableResult
    package func updateSignIn<T>(
        _ key: DiscoveredSignInKey, _ change: (inout PersistedDiscoveredSignIn?) -> T
    ) throws(StateError) -> T {
        try signInFile(key).update { stored in
            var mine = stored.flatMap { $0.key == key ? $0 : nil }
            let result = change(&mine)
            if mine != nil || stored?.key == key { stored = mine }
            return result
        }
    }

    /// The key of the sign-in the route to `upstream` last signed in with.
    public func routeKey(upstream: String) throws(StateError) -> DiscoveredSignInKey? {
        try routesFile.load()?.routes[upstream]
    }

    package func setRouteKey(_ key: DiscoveredSignInKey?, upstream: String) throws(StateError) {
        try routesFile.update { index in
            var routes = index?.routes ?? [:]
            routes[upstream] = key
            index = routes.isEmpty ? nil : PersistedDiscoveredRoutes(routes: routes)
        }
    }

    /// The lock that makes redeeming the refresh token under `key` one critical section per machine.
    package func redemptionLock(_ key: DiscoveredSignInKey) -> RedemptionLock {
        RedemptionLock(directory: directory, fileName: signInFile(key).name)
    }

    private func registrationFile(_ issuer: String) -> StateFile<PersistedRegistration> {
        StateFile(directory: directory, name: "discovered-client-\(Self.hash([issuer])).json")
    }

    private func signInFile(_ key: DiscoveredSignInKey) -> StateFile<PersistedDiscoveredSignIn> {
        StateFile(directory: directory, name: signInFileName(key))
    }

    /// `discovered-signin-<h>.json`, the file of the sign-in under `key`.
    func signInFileName(_ key: DiscoveredSignInKey) -> String {
        "discovered-signin-\(Self.hash([key.issuer, key.clientID, key.resource])).json"
    }

    private var routesFile: StateFile<PersistedDiscoveredRoutes> {
        StateFile(directory: directory, name: "discovered-routes.json")
    }

    /// 128 bits of SHA-256 over the parts, each length-prefixed (so no two keys share an encoding), in hex.
    package static func hash(_ parts: [String]) -> String {
        var bytes: [UInt8] = []
        for part in parts { bytes += Array("\(part.utf8.count):".utf8) + Array(part.utf8) }
        return SHA256.hash(data: bytes).prefix(16).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
