import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `bearer-proxy status` and `/-/status` show: the account's identity and, per route, its scope set
/// and whether a token is cached and until when. Never a token, refresh token or secret (SPEC §9).
public struct StatusReport: Sendable {
    public struct Account: Sendable {
        public var flow: String
        public var signedIn: Bool
        public var identity: AccountIdentity?
        /// `tokenType` when it is not `bearer`; nil for bearer tokens.
        public var tokenType: TokenTypePreference?
        /// The DPoP key's thumbprint (`jkt`), when there is a key — never the key.
        var dpopThumbprint: String?

        init(
            flow: String, signedIn: Bool, identity: AccountIdentity? = nil, tokenType: TokenTypePreference? = nil,
            dpopThumbprint: String? = nil
        ) {
            self.flow = flow
            self.signedIn = signedIn
            self.identity = identity
            self.tokenType = tokenType
            self.dpopThumbprint = dpopThumbprint
        }
    }

    public struct RouteEntry: Sendable {
        public var prefix: String
        public var upstream: String
        public var scopes: ScopeSet?
        public var token: TokenStatus?
        /// For the `firebase` flow: which of its tokens the route carries.
        public var kind: FirebaseTokenKind?
        /// The headers a request must carry (`requireHeader`, global and the route's), by name.
        var requiredHeaders: [String] = []
        /// A discovered route's sign-in (SPEC §6.3).
        public var discovered: DiscoveredRouteState?
        /// An on-behalf-of route: how many callers' tokens the process that reports keeps (a running `serve`'s are
        /// in its memory only, so `bearer-proxy status` in another process counts none).
        var onBehalfOfCallers: Int?
    }

    public var account: Account
    public var routes: [RouteEntry]
    var generatedAt: Date
    /// Requests per route prefix since start, when a running proxy makes the report (`/-/status`).
    public var requestCounts: [String: Int]?
    /// Failed writes of the token cache file not yet made good; nil when the file holds everything.
    public var unsaved: UnsavedChanges?
    /// Who may use the proxy: the listener and the checks in force (SPEC §9).
    var access: AccessSummary?

    public init(
        account runtime: any AccountView, requestCounts: [String: Int]? = nil, access: AccessSummary? = nil,
        now: Date = Date()
    ) {
        self.access = access
        self.requestCounts = requestCounts
        account = Account(
            flow: runtime.configuration.account.flow.rawValue, signedIn: runtime.isSignedIn,
            identity: runtime.identity, tokenType: runtime.tokenType, dpopThumbprint: runtime.dpopThumbprint)
        routes = runtime.configuration.routes.routes.map { route in
            let scopes: ScopeSet? =
                switch route.auth {
                case .bearer(let scopes), .providerAccess(let scopes): scopes
                // Its tokens are its callers': the scopes are shown, no token of the account's.
                case .onBehalfOf(let settings): settings.scopes
                case .none, .firebaseID, .discover: nil
                }
            return RouteEntry(
                prefix: route.prefix, upstream: route.upstream.url, scopes: scopes,
                token: route.auth.tokenKey.map { runtime.tokens.status(for: $0) },
                kind: route.auth.tokenKey.flatMap(FirebaseTokenKind.init(key:)),
                requiredHeaders: route.requiredHeaders.map(\.name), discovered: runtime.discoveredState(of: route),
                onBehalfOfCallers: runtime.onBehalfOfCallers(of: route))
        }
        generatedAt = now
        unsaved = runtime.unsavedChanges
    }

    /// The JSON document (`status --json`), keys stable for scripts.
    public var json: Data {
        var identity: [String: String] = [:]
        if let known = account.identity {
            identity["name"] = known.name
            identity["username"] = known.username
            identity["oid"] = known.objectID
            identity["tid"] = known.tenantID
            identity["firebaseUid"] = known.firebaseUID
        }
        let routeObjects: [[String: Any]] = routes.map { entry in
            var object: [String: Any] = ["prefix": entry.prefix, "upstream": entry.upstream]
            if let scopes = entry.scopes { object["scopes"] = scopes.scopes }
            if let kind = entry.kind { object["tokenKind"] = kind.rawValue }
            if let token = entry.token {
                var tokenObject: [String: Any] = ["cached": token.cached]
                if let expiresOn = token.expiresOn {
                    tokenObject["expiresOn"] = expiresOn.formatted(.iso8601)
                    tokenObject["expiresInSeconds"] = Self.wholeSeconds(expiresOn.timeIntervalSince(generatedAt))
                }
                if let lastError = token.lastError { tokenObject["lastRefreshError"] = lastError }
                if token.cached { tokenObject["tokenType"] = token.boundKey == nil ? "Bearer" : "DPoP" }
                object["token"] = tokenObject
            }
            if let requestCounts { object["requests"] = requestCounts[entry.prefix] ?? 0 }
            if !entry.requiredHeaders.isEmpty { object["requiredHeaders"] = entry.requiredHeaders }
            if let discovered = entry.discovered { object["discovered"] = Self.jsonObject(discovered, at: generatedAt) }
            if let callers = entry.onBehalfOfCallers { object["onBehalfOf"] = ["callersKept": callers] }
            return object
        }
        var accountObject: [String: Any] = [
            "flow": account.flow, "signedIn": account.signedIn, "identity": identity,
            "tokenType": (account.tokenType ?? .bearer).rawValue,
        ]
        if let thumbprint = account.dpopThumbprint { accountObject["dpopKeyThumbprint"] = thumbprint }
        var document: [String: Any] = ["account": accountObject, "routes": routeObjects]
        if let access { document["access"] = access.jsonObject }
        if let unsaved {
            document["tokenCache"] = [
                "unsavedChanges": true, "unsavedSince": unsaved.since.formatted(.iso8601),
                "unsavedForSeconds": Self.wholeSeconds(unsaved.duration / .seconds(1)),
                "signInUnsaved": unsaved.includesSignIn, "failedWrites": unsaved.failedWrites,
                "lastWriteError": unsaved.lastError,
            ]
        } else {
            document["tokenCache"] = ["unsavedChanges": false]
        }
        return
            JSONObject.data(document, pretty: true) ?? Data()
    }

    /// Lines for a person.
    public var text: String {
        var lines: [String] = []
        var who = "account: \(account.flow)"
        if let identity = account.identity {
            let parts = [
                identity.name, identity.username, identity.firebaseUID.map { "Firebase uid \($0)" },
                identity.objectID.map { "oid \($0)" }, identity.tenantID.map { "tenant \($0)" },
            ].compactMap { $0 }
            if !parts.isEmpty { who += " — " + parts.joined(separator: ", ") }
        }
        lines.append(who + (account.signedIn ? "" : " (not signed in: run bearer-proxy login)"))
        if let tokenType = account.tokenType {
            // RFC 9449: the key's thumbprint identifies it to the authorization server; the key itself never shows.
            let key = account.dpopThumbprint.map { "DPoP key jkt \($0)" } ?? "no DPoP key yet"
            lines.append("token type: \(tokenType.rawValue) (\(key))")
        }
        if let access { lines.append(access.line) }
        if let unsaved {
            let seconds = Self.wholeSeconds(unsaved.duration / .seconds(1))
            let what = unsaved.includesSignIn ? "the sign-in (refresh token) is" : "some tokens are"
            lines.append(
                "token cache: \(what) not saved for \(seconds) s (\(unsaved.failedWrites) failed writes; last: "
                    + "\(unsaved.lastError)); retrying")
        }
        for entry in routes {
            var line = "  \(entry.prefix) → \(entry.upstream)"
            if let kind = entry.kind { line += "  \(kind.rawValue)" }
            if let scopes = entry.scopes {
                line += "  scopes: \(scopes.scopes.isEmpty ? "(none)" : scopes.description)"
            }
            if let token = entry.token {
                if token.cached, let expiresOn = token.expiresOn {
                    let minutes = Self.wholeSeconds(expiresOn.timeIntervalSince(generatedAt)) / 60
                    line += "  token: cached\(token.boundKey == nil ? "" : " (DPoP-bound)"), expires in \(minutes) min"
                    if entry.kind == .providerAccess { line += " (not refreshable: run bearer-proxy login after)" }
                } else {
                    line += "  token: none cached"
                }
                if let lastError = token.lastError { line += " (last refresh failed: \(lastError))" }
            } else if let discovered = entry.discovered {
                line += "  " + Self.line(discovered, route: entry.prefix, at: generatedAt)
            } else if let callers = entry.onBehalfOfCallers {
                line += "  token: each caller's own, exchanged (\(callers) callers kept by this process)"
            } else {
                line += "  (no token)"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

extension StatusReport {
    /// Whole seconds of `interval`, within a century either way: an expiry read from a token file, a JWT's `exp` or
    /// a provider's number cannot reach a trapping conversion here.
    static func wholeSeconds(_ interval: TimeInterval) -> Int {
        guard interval.isFinite else { return 0 }
        return Int(seconds: interval, rounded: .towardZero, clampedTo: -3_153_600_000...3_153_600_000)
    }
}

extension StatusReport {
    /// A discovered route's sign-in for `status --json`.
    static func jsonObject(_ state: DiscoveredRouteState, at now: Date) -> [String: Any] {
        var object: [String: Any] = ["state": state.state.rawValue, "scopes": state.scopes]
        object["authorizationServer"] = state.authorizationServer
        object["clientKind"] = state.clientKind
        object["clientId"] = state.clientID
        object["detail"] = state.detail
        if state.state != .needsSignIn, state.state != .error {
            object["tokenType"] = state.dpopKeyThumbprint == nil ? "bearer" : "dpop"
            object["dpopKeyThumbprint"] = state.dpopKeyThumbprint
        }
        if state.state == .needsStepUp { object["stepUpScopes"] = state.stepUpScopes }
        if let unsaved = state.unsaved {
            var held: [String: Any] = ["heldBy": unsaved.heldBy.rawValue]
            held["failedWrites"] = unsaved.failedWrites
            held["lastWriteError"] = unsaved.lastWriteError
            object["unsaved"] = held
        }
        if let expiresOn = state.expiresOn {
            object["expiresOn"] = expiresOn.formatted(.iso8601)
            object["expiresInSeconds"] = wholeSeconds(expiresOn.timeIntervalSince(now))
        }
        return object
    }

    /// A discovered route's sign-in in one line for a person.
    package static func line(_ state: DiscoveredRouteState, route: String, at now: Date) -> String {
        switch state.state {
        case .needsSignIn:
            // A route of the account's own authorization server signs in with the account.
            let command = state.clientKind == "account" ? "bearer-proxy login" : "bearer-proxy login \(route)"
            return "discovered: needs-sign-in (run \(command))"
                + (state.detail.map { ": \($0)" } ?? "")
        case .error:
            return "discovered: error (\(state.detail ?? "unknown"))"
        case .needsStepUp:
            // Quoted as the step-up problem quotes them (``StepUpScopes`` kept only shell-safe scope tokens).
            return "discovered: needs-step-up at \(state.authorizationServer ?? "?") (the upstream asked for more "
                + "scopes: run bearer-proxy login \(route) --scopes '\(state.stepUpScopes.joined(separator: " "))')"
        case .signedIn:
            var line = "discovered: signed-in at \(state.authorizationServer ?? "?")"
            if let kind = state.clientKind { line += ", \(kind) client \(state.clientID ?? "")" }
            line += ", scopes: \(state.scopes.isEmpty ? "(none)" : state.scopes.joined(separator: " "))"
            if let thumbprint = state.dpopKeyThumbprint { line += ", token type: dpop (DPoP key jkt \(thumbprint))" }
            if let expiresOn = state.expiresOn {
                let seconds = wholeSeconds(expiresOn.timeIntervalSince(now))
                line += seconds > 0 ? ", token expires in \(seconds / 60) min" : ", token expired (refreshed when used)"
            }
            return line + (state.unsaved.map(unsavedWords) ?? "")
        }
    }

    /// What a person should know of a sign-in held in memory only.
    private static func unsavedWords(_ unsaved: DiscoveredRouteState.Unsaved) -> String {
        switch unsaved.heldBy {
        case .thisProcess:
            let failures = unsaved.failedWrites.map { " \($0) time\($0 == 1 ? "" : "s")" } ?? ""
            return "; its newest refresh token is held in memory only: writing it to the state directory failed"
                + failures + (unsaved.lastWriteError.map { " (\($0))" } ?? "") + ", and is retried until it lands"
        case .anotherProcess:
            return "; a running bearer-proxy holds its newest refresh token in memory only (its write to the state "
                + "directory failed) and retries the write; until it lands, other processes wait rather than "
                + "redeem the retired one in the file"
        }
    }
}
