import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging

/// The metadata a sign-in stored (cached with the tokens, reused on a transient failure): written with every sign-in
/// and confirmed refresh, read back when a fresh discovery fails for now — never when it fails definitively, where
/// nothing stored may stand in for the servers' answer.
extension DiscoveredAuthorization {
    /// Discovery for `route`, or — when it fails for now (``DiscoveryError/isTransient``) and the route has a
    /// sign-in whose metadata was stored — that metadata, with the failure it stands in for.
    public static func discoverOrStored(
        for route: Route, settings: DiscoverySettings, stateDirectory: StateDirectory, logger: Logger
    ) async throws(DiscoveryError) -> (found: DiscoveredAuthorization, unavailable: DiscoveryError?) {
        do {
            return (try await discover(for: route, settings: settings, logger: logger), nil)
        } catch let error where error.isTransient {
            let store = DiscoveredSignInStore(directory: stateDirectory)
            guard let key = try? store.routeKey(upstream: route.upstream.url), let signIn = try? store.signIn(key),
                let stored = stored(signIn, settings: settings)
            else { throw error }
            return (stored, error)
        }
    }

    /// What `signIn` stored, as discovery would have found it; nil for a sign-in stored without its metadata.
    static func stored(
        _ signIn: PersistedDiscoveredSignIn, settings: DiscoverySettings
    ) -> DiscoveredAuthorization? {
        guard let authorization = signIn.authorizationEndpoint, let methods = signIn.codeChallengeMethods,
            methods.contains("S256")
        else { return nil }
        let registration: ClientRegistration =
            if let clientID = settings.clientID {
                .configured(clientID: clientID)
            } else if let document = settings.clientMetadataDocument,
                signIn.clientKind == ClientRegistration.metadataDocument(url: document).kind,
                signIn.key.clientID == document
            {
                .metadataDocument(url: document)
            } else if let endpoint = signIn.registrationEndpoint {
                .dynamic(endpoint: endpoint)
            } else {
                .unavailable
            }
        return DiscoveredAuthorization(
            probeStatus: 0, metadataFromChallenge: false, resourceMetadataAttempts: [], resource: signIn.key.resource,
            issuer: signIn.key.issuer, serverMetadataAttempts: [], authorizationEndpoint: authorization,
            tokenEndpoint: signIn.tokenEndpoint, registrationEndpoint: signIn.registrationEndpoint,
            revocationEndpoint: signIn.revocationEndpoint,
            pushedAuthorizationRequestEndpoint: signIn.pushedAuthorizationRequestEndpoint,
            codeChallengeMethods: methods,
            tokenEndpointAuthMethods: signIn.tokenEndpointAuthMethods,
            issParameterSupported: signIn.issParameterSupported ?? false, scopes: signIn.scopes, scopeSource: .stored,
            registration: registration, dpopSigningAlgorithms: signIn.dpopSigningAlgorithms ?? [],
            dpopBoundAccessTokensRequired: signIn.dpopBoundAccessTokensRequired ?? false)
    }
}

extension PersistedDiscoveredSignIn {
    /// Keeps the metadata of `found` — discovery's, fresh — with the sign-in.
    mutating func keep(_ found: DiscoveredAuthorization) {
        tokenEndpoint = found.tokenEndpoint
        revocationEndpoint = found.revocationEndpoint
        authorizationEndpoint = found.authorizationEndpoint
        registrationEndpoint = found.registrationEndpoint
        codeChallengeMethods = found.codeChallengeMethods
        issParameterSupported = found.issParameterSupported
        tokenEndpointAuthMethods = found.tokenEndpointAuthMethods
        pushedAuthorizationRequestEndpoint = found.pushedAuthorizationRequestEndpoint
        dpopSigningAlgorithms = found.dpopSigningAlgorithms
        dpopBoundAccessTokensRequired = found.dpopBoundAccessTokensRequired
    }
}
