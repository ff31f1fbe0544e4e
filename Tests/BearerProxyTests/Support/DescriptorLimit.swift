#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The test process holds both ends of every connection it makes to its in-process proxies, and their upstream
/// connections: one test of 1,000 concurrent requests alone needs more than 2,000 descriptors, while other suites
/// run beside it. An ordinary account's soft limit is often 1,024 (CI's account's is), which such a test exceeds in
/// its own client before the proxy is at fault. So the process raises its soft `RLIMIT_NOFILE` to its hard limit,
/// once, before its first proxy starts, as a server process may; `serve` itself takes the limit it is given and caps
/// its connections to it (``ConnectionLimiter``, tested under a low limit by `DescriptorLimitTests`).
enum DescriptorLimit {
    /// Evaluated once: raises the soft limit when the hard one allows more.
    static let raised: Void = {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = min(limit.rlim_max, 65_536)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }()
}
