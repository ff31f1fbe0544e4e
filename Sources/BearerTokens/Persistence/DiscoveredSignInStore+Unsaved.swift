#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The mark of a discovered sign-in whose newest refresh token a process holds in memory only, its write having failed
/// (a full disk): a shared `flock` on `.discovered-signin-<h>.json.unsaved-lock`, held by that process until the write
/// lands, let go by the kernel when the process ends. Another process that sees it held does not redeem the refresh
/// token the file still shows — the authorization server has retired it, and redeeming it would get `invalid_grant`
/// and sign the route out (or, at a server that detects reuse, revoke the whole family).
extension DiscoveredSignInStore {
    /// The mark's lock file for the sign-in under `key`.
    package func unsavedLockPath(_ key: DiscoveredSignInKey) -> String {
        directory.path + "/." + signInFileName(key) + ".unsaved-lock"
    }

    /// Whether another process holds the mark for `key` now (this process must not hold it itself: its own lock
    /// would be found too).
    package func isUnsavedElsewhere(_ key: DiscoveredSignInKey) -> Bool {
        let descriptor = open(unsavedLockPath(key), O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(descriptor, LOCK_UN)
        return false
    }
}
