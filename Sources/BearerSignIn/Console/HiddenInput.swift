import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns a terminal's echo off while a secret is typed, and back on afterwards — also when the prompt is
/// cancelled (Ctrl-C), so the person's shell is never left without echo.
final class HiddenInput: Sendable {
    private let descriptor: Int32
    private let saved = Mutex<termios?>(nil)

    /// Turns echo off on `descriptor` if it is a terminal (keeping the echo of the final newline).
    init(descriptor: Int32) {
        self.descriptor = descriptor
        var settings = termios()
        guard isatty(descriptor) == 1, tcgetattr(descriptor, &settings) == 0 else { return }
        saved.withLock { $0 = settings }
        var hidden = settings
        hidden.c_lflag &= ~tcflag_t(ECHO)
        hidden.c_lflag |= tcflag_t(ECHONL)
        tcsetattr(descriptor, TCSAFLUSH, &hidden)
    }

    /// Puts the terminal back as it was; idempotent.
    package func restore() {
        guard
            var settings = saved.withLock({ value -> termios? in
                defer { value = nil }; return value
            })
        else { return }
        tcsetattr(descriptor, TCSAFLUSH, &settings)
    }
}
