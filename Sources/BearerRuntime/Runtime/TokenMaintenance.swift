import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import ServiceLifecycle

/// The background work of the token engine, as a `Service` next to the proxy: once a second it refreshes tokens
/// past their `refreshOn` (the current ones keep being served meanwhile), takes over changes that another process
/// made to the token cache file, and writes again what a failed write left unsaved (docs/operations.md).
public struct TokenMaintenance: Service {
    package let account: @Sendable () -> AccountRuntime
    /// Shuts down the accounts of replaced configurations once their exchanges have ended (a running proxy's).
    let releaseRetired: @Sendable () async -> Void
    let interval: Duration

    /// Maintains whatever account `proxy` has at each round (a reload may replace it).
    public init(proxy: RunningProxy, interval: Duration = .seconds(1)) {
        self.account = { proxy.account }
        self.releaseRetired = { await proxy.releaseRetiredAccounts() }
        self.interval = interval
    }

    public init(account: AccountRuntime, interval: Duration = .seconds(1)) {
        self.account = { account }
        self.releaseRetired = {}
        self.interval = interval
    }

    public func run() async throws {
        // Graceful shutdown cancels the loops; that is their normal end, not a failure of the service.
        await cancelWhenGracefulShutdown {
            // Two loops: following the files reads local files only, so no token request — up to 30 s at a provider
            // that hangs — can hold back a `logout` reaching this process (docs/tokens.md: within a second).
            await withDiscardingTaskGroup { group in
                group.addTask { await every(interval) { await follow() } }
                group.addTask { await every(interval) { await refresh() } }
            }
        }
        // `serve`'s services stop in reverse order, this one before the server drains: a request waiting for a
        // `login ROUTE` in progress is answered now rather than holding the drain.
        account().discovered.stopWaiting()
    }

    /// One round of both loops, one after the other (tests drive it).
    func tick() async {
        await follow()
        await refresh()
    }

    /// Release what replaced configurations no longer need, pick up another process's sign-in or sign-out (the
    /// account's file, and the discovered routes' sign-ins), and retry a write that failed.
    func follow() async {
        await releaseRetired()
        let account = self.account()
        account.persistence?.reloadIfChanged(tokens: account.tokens, session: account.session)
        account.persistence?.saveUnsavedChanges(tokens: account.tokens, session: account.session)
        account.discovered.followStoredSignIns()
    }

    /// Refresh what is due, and forget the on-behalf-of callers whose tokens have all expired.
    func refresh() async {
        let account = self.account()
        await account.tokens.refreshDueTokens()
        account.onBehalfOf.forgetSpent()
    }

    /// Runs `body`, then again `interval` after it ended, until the task is cancelled.
    private func every(_ interval: Duration, _ body: () async -> Void) async {
        while !Task.isCancelled {
            await body()
            try? await Task.sleep(for: interval)
        }
    }
}
