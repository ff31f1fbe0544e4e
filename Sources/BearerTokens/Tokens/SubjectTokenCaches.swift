import Crypto
import Synchronization

/// The tokens an on-behalf-of route obtained for its callers: one ``TokenCache`` per caller's token (the subject of
/// the exchange), found by the subject's SHA-256, so that no token obtained for one caller is ever handed to another
/// — a cache's subset rule and single flight work inside one subject's cache only.
///
/// Bounded: at most ``maximum`` subjects at once, the least recently used forgotten for a new one; and
/// ``forgetSpent()`` (the maintenance sweep) forgets every subject with nothing left worth keeping — no valid token,
/// no exchange under way, no back-off. An exchange under way for a forgotten subject still answers the requests that
/// wait for it; only its token is not kept. Nothing here is written to disk: the subjects are other people's tokens.
package final class SubjectTokenCaches: Sendable {
    private struct Entry {
        let cache: TokenCache
        /// ``State/uses`` when the subject was last asked for.
        var lastUse: UInt64
    }

    private struct State {
        var entries: [SHA256Digest: Entry] = [:]
        /// Counts the lookups: the least recently used entry has the lowest ``Entry/lastUse``.
        var uses: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The most subjects kept at once (`onBehalfOf.maxSubjects`).
    package let maximum: Int
    /// A new cache whose flow exchanges `subject`.
    private let makeCache: @Sendable (_ subject: String) -> TokenCache

    package init(maximum: Int, makeCache: @escaping @Sendable (_ subject: String) -> TokenCache) {
        self.maximum = max(1, maximum)
        self.makeCache = makeCache
    }

    /// The cache of `subject`'s tokens: the one kept for it, or a new, empty one.
    package func tokens(forSubject subject: String) -> TokenCache {
        let digest = SHA256.hash(data: Array(subject.utf8))
        return state.withLock { state in
            state.uses &+= 1
            let use = state.uses
            if let entry = state.entries[digest] {
                state.entries[digest]?.lastUse = use
                return entry.cache
            }
            if state.entries.count >= maximum,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.entries[oldest.key] = nil
            }
            let cache = makeCache(subject)
            state.entries[digest] = Entry(cache: cache, lastUse: use)
            return cache
        }
    }

    /// Forgets every subject whose cache holds nothing worth keeping (``TokenCache/isSpent``); returns how many.
    @discardableResult
    package func forgetSpent() -> Int {
        let entries = state.withLock { $0.entries }
        let spent = entries.compactMap { $0.value.cache.isSpent ? $0.key : nil }
        guard !spent.isEmpty else { return 0 }
        return state.withLock { state in
            var forgotten = 0
            for digest in spent {
                // Only the cache judged spent: a subject asked for again meanwhile got the same cache back, and one
                // forgotten and made anew meanwhile is another cache.
                guard let entry = state.entries[digest], entry.cache === entries[digest]?.cache, entry.cache.isSpent
                else { continue }
                state.entries[digest] = nil
                forgotten += 1
            }
            return forgotten
        }
    }

    /// How many subjects are kept now (for `status` and tests).
    package var count: Int { state.withLock { $0.entries.count } }
}
