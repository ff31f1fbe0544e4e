/// What the fake saw: the recorded requests per endpoint, the `authUri`s it answered, and waits.
extension FakeFirebase {
    /// Every recorded request, in arrival order.
    var requests: [RecordedFirebaseRequest] {
        self.state.read { $0.requests }
    }

    /// The recorded requests to `endpoint`, in order.
    func requests(to endpoint: Endpoint) -> [RecordedFirebaseRequest] {
        self.state.read { $0.requests.filter { $0.endpoint == endpoint } }
    }

    /// How many requests `endpoint` received.
    func requestCount(_ endpoint: Endpoint) -> Int {
        self.state.read { $0.requests.count(where: { $0.endpoint == endpoint }) }
    }

    /// createAuthUri calls (`parameters`: `providerId`, `continueUri`, `customParameter.tenant`, `oauthScope`, ...).
    var createAuthUriRequests: [RecordedFirebaseRequest] { self.requests(to: .createAuthUri) }
    /// Visits of the Microsoft page (`parameters`: the query: `tenant`, `prompt`, `login_hint`, `scope`, ...).
    var authorizeRequests: [RecordedFirebaseRequest] { self.requests(to: .authorize) }
    /// signInWithIdp calls (`parameters`: `requestUri`, `sessionId`, `postBody`, `idToken`, `pendingToken`, ...).
    var signInWithIdpRequests: [RecordedFirebaseRequest] { self.requests(to: .signInWithIdp) }
    /// signInWithPassword calls (`password` recorded as `<redacted>`).
    var passwordSignIns: [RecordedFirebaseRequest] { self.requests(to: .signInWithPassword) }
    /// securetoken calls; `bodyStyle` tells form from JSON.
    var secureTokenRequests: [RecordedFirebaseRequest] { self.requests(to: .secureToken) }

    /// The `authUri`s createAuthUri answered, in order.
    var authURIs: [String] {
        self.state.read { $0.authURIs }
    }

    /// Waits until at least `n` requests to `endpoint` have been recorded.
    func waitForRequests(_ n: Int, to endpoint: Endpoint, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .requests(endpoint, n), timeout: timeout)
    }

    /// Waits until at least `n` createAuthUri calls have arrived.
    func waitForCreateAuthUriRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.waitForRequests(n, to: .createAuthUri, timeout: timeout)
    }

    /// Waits until the Microsoft page has been visited at least `n` times.
    func waitForAuthorizeRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.waitForRequests(n, to: .authorize, timeout: timeout)
    }

    /// Waits until at least `n` signInWithIdp calls have arrived.
    func waitForSignInWithIdpRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.waitForRequests(n, to: .signInWithIdp, timeout: timeout)
    }

    /// Waits until at least `n` signInWithPassword calls have arrived.
    func waitForPasswordSignIns(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.waitForRequests(n, to: .signInWithPassword, timeout: timeout)
    }

    /// Waits until at least `n` securetoken calls have arrived.
    func waitForSecureTokenRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.waitForRequests(n, to: .secureToken, timeout: timeout)
    }
}
