import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A file of its own although short: both the JSON log handler and the command line write diagnostics here.

/// Writes to file descriptor 2 directly (FoundationEssentials has no `FileHandle`), whole lines at a time so lines
/// from several threads do not interleave mid-line (POSIX: a `write(2)` of up to `PIPE_BUF` bytes to a pipe is atomic).
public enum StandardError {
    public static func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    public static func write(bytes: [UInt8]) {
        var bytes = bytes[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { writeToDescriptor(2, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return  // nowhere left to report it
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// The C library's `write(2)`, named apart from ``StandardError/write(_:)``.
private func writeToDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
