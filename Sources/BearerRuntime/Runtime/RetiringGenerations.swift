import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens

/// The generations a reload has replaced, kept until their last exchange has ended — or until a limit, since a
/// WebSocket tunnel can last for hours — together with the accounts they hold (docs/operations.md).
///
/// Nothing here waits. A reload hands the replaced generation over and returns at once, so the next SIGHUP applies
/// at once and a SIGTERM is never held behind a reload; whoever comes by next (the once-a-second token maintenance,
/// the next reload, shutdown) releases what has drained and shuts down the accounts no generation holds any longer.
/// An account lives while *any* generation that uses it has exchanges — the one installed, the one replaced last, or
/// one replaced ten reloads ago — so an exchange's token replay after a 401 always finds its account.
///
/// A value owned by ``ReloadableState``, changed under the same lock as the installed generation.
struct RetiringGenerations: Sendable {
    private struct Retiring: Sendable {
        let generation: ReloadableState.Generation
        /// When the generation is let go even with exchanges left (on the monotonic clock).
        let deadline: ContinuousClock.Instant
    }

    private var retiring: [Retiring] = []

    /// How long a replaced generation's exchanges keep its account alive.
    let limit: Duration

    init(limit: Duration) {
        self.limit = limit
    }

    /// How many replaced generations are still kept.
    package var count: Int { retiring.count }

    /// Takes over `generation`, which a reload has just replaced: it gains no exchange from now on.
    mutating func add(_ generation: ReloadableState.Generation, at now: ContinuousClock.Instant) {
        retiring.append(Retiring(generation: generation, deadline: now.advanced(by: limit)))
    }

    /// Lets go of the generations whose exchanges have all ended or whose limit has passed, and returns the
    /// accounts that neither `installed` nor any generation still kept holds: the caller shuts them down.
    mutating func release(keeping installed: AccountRuntime, at now: ContinuousClock.Instant)
        -> [AccountRuntime]
    {
        var kept: [Retiring] = []
        var gone: [AccountRuntime] = []
        for entry in retiring {
            if entry.generation.context.hasExchanges && entry.deadline > now {
                kept.append(entry)
            } else {
                gone.append(entry.generation.account)
            }
        }
        retiring = kept
        return Self.distinct(gone, except: [installed] + kept.map(\.generation.account))
    }

    /// Lets go of every generation (shutdown, once the server has drained) and returns their accounts other than
    /// `installed`.
    mutating func releaseAll(keeping installed: AccountRuntime) -> [AccountRuntime] {
        defer { retiring = [] }
        return Self.distinct(retiring.map(\.generation.account), except: [installed])
    }

    /// `candidates` that are none of `held`, each once (two replaced generations can share an account).
    private static func distinct(_ candidates: [AccountRuntime], except held: [AccountRuntime]) -> [AccountRuntime] {
        var seen = Set(held.map(\.instance))
        return candidates.filter { seen.insert($0.instance).inserted }
    }
}
