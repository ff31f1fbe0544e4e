import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process that holds an account's redemption lock, as one does in the middle of a token request, until it is
/// killed — for the tests of what the others do meanwhile. It takes the same `flock(2)` on the same file as
/// ``RedemptionLock``, but blocking, which the product never does.
public enum LockHolding {
    /// Takes `lock`'s file lock and never lets go; calls `onceHeld` once it holds it. Blocks this thread.
    public static func holdUntilKilled(
        _ lock: RedemptionLock, directory: StateDirectory, onceHeld: () -> Void
    ) throws(StateError) -> Never {
        try directory.prepare()
        let descriptor = open(lock.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .cannotWrite(path: lock.path, reason: lastError()) }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno != EINTR { throw .cannotWrite(path: lock.path, reason: lastError()) }
        }
        onceHeld()
        while true { pause() }
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
