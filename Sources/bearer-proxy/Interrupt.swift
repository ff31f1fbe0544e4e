import BearerProxy
import UnixSignals

/// Ctrl-C during a sign-in: the wait (a prompt, device-code polling, the browser) is cancelled, the terminal is
/// put back as it was, and the command ends with "Sign-in cancelled." instead of dying mid-prompt.
enum Interrupt {
    /// Runs `body`; SIGINT or SIGTERM cancels it and throws ``SignInFailure/cancelled``.
    static func cancellingOnSignal<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                for await _ in signals { return nil }
                // The sequence ends only when this task is cancelled: the body finished first.
                try Task.checkCancellation()
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw SignInFailure.cancelled }
            return value
        }
    }
}
