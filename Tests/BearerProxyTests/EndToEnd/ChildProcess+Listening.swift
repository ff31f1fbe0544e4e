import Foundation

extension ChildProcess {
    /// Why ``withListening(executable:_:environment:within:_:)`` gave up before its body ran; names what serve printed.
    struct ListeningError: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `bearer-proxy serve` listening on port 0 (or a command that execs one) as
    /// ``withRunning(_:_:stdin:environment:errorLines:_:)`` does, and hands `body` the port it was given: the one in
    /// serve's `listening on http://HOST:PORT` line, logged on stderr once the listener is bound.
    ///
    /// A port the test picks and frees for the child is only free while the test holds it: on a busy machine another
    /// process can bind it before the child does. The kernel's port 0 cannot be lost that way. With several listeners
    /// the first TCP one counts. The body starts only once serve listens; if serve exits first, or says nothing of
    /// the kind within `within`, the test fails with what serve printed on stderr. The line is logged at info level:
    /// a `--log-level` above it hides it.
    static func withListening<Value: Sendable>(
        executable: String = CommandLineTests.binary, _ arguments: [String], environment: [String: String]? = nil,
        within: Duration = TestLimits.wait, _ body: (_ port: Int, Running) async throws -> Value
    ) async throws -> (value: Value, output: Output) {
        let (lines, errorLines) = AsyncStream<String>.makeStream()
        return try await withRunning(executable, arguments, environment: environment, errorLines: errorLines) {
            running in
            let port = try await boundPort(in: lines, within: within)
            return try await body(port, running)
        }
    }

    /// The port in serve's `listening on http://HOST:PORT (account: …)` line, as the text and the JSON log formats
    /// write it, or nil for any other line — a Unix socket's, or the warning about a non-loopback address (which
    /// names the address asked for, port 0 included).
    static func listeningPort(in line: String) -> Int? {
        guard let start = line.range(of: "listening on http://")?.upperBound else { return nil }
        let address = line[start...].prefix { !$0.isWhitespace && $0 != "\"" }
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        return port
    }

    /// The first port `lines` announce; the lines before it go into the error when none comes within `limit`.
    private static func boundPort(in lines: AsyncStream<String>, within limit: Duration) async throws -> Int {
        let printed = CapturingLogHandler.Store()
        do {
            return try await withTimeout(limit, waitingFor: "serve to say where it listens") {
                for await line in lines {
                    if let port = listeningPort(in: line) { return port }
                    printed.append(line)
                }
                try Task.checkCancellation()
                throw ListeningError(
                    description: "serve closed its stderr (exited) before it listened; its stderr:\n"
                        + printed.all.joined(separator: "\n"))
            }
        } catch TestSupportError.timedOut {
            throw ListeningError(
                description: "serve said nothing of where it listens within \(limit); its stderr so far:\n"
                    + printed.all.joined(separator: "\n"))
        }
    }
}
