import BearerTokens

/// The decline `serve` keeps per authorization server (``SignInBackOff``), read and written by the sign-in that holds
/// the server's lock: a second `serve` that waited there reads the first one's decline before it opens anything.
extension DiscoveredSignIn {
    /// Refuses a sign-in `serve` opens while a decline with this server is noted; a person's is never refused.
    func refuseWhileDeclined() throws(SignInFailure) {
        guard let backOff, let until = backOff.until(issuer: found.issuer) else { return }
        let reason = SignInBackOff.reason(issuer: found.issuer)
        throw SignInFailure(.rejected, SignInBackOff.explanation(reason, until: until, now: backOff.now()) + ".")
    }

    /// Runs `signIn`: one that succeeds forgets the server's decline (whoever opened it); one `serve` opened that
    /// was declined — refused in the browser or after it — or not finished in time notes one. A sign-in that ended
    /// before any tab (a busy port, no client identity) or was cancelled (shutdown) notes nothing: nobody said no.
    func notingDeclines(
        console: any SignInConsole, _ signIn: () async throws(SignInFailure) -> Outcome
    ) async throws(SignInFailure) -> Outcome {
        do {
            let outcome = try await signIn()
            do {
                try store.clearDeclined(issuer: found.issuer)
            } catch {
                console.show("The earlier declined sign-in with \(found.issuer) could not be forgotten: \(error)")
            }
            return outcome
        } catch {
            if let backOff, error.kind == .rejected || error.kind == .timedOut {
                do {
                    try backOff.declined(issuer: found.issuer)
                } catch {
                    console.show("The declined sign-in with \(found.issuer) could not be noted: \(error)")
                }
            }
            throw error
        }
    }
}
