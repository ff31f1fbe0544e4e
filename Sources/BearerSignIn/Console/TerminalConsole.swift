import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real terminal: questions and messages on standard error, answers from standard input, the system browser
/// through `$BROWSER`, `xdg-open` (when there is a display) or `open`.
public final class TerminalConsole: SignInConsole {
    private let input: Int32
    private let output: Int32
    private let environment: [String: String]
    /// Progress state: whether a line of dots is open, and when the last plain progress line was written.
    private let progress = Mutex<(dots: Bool, lastLine: ContinuousClock.Instant?)>((false, nil))
    /// On a pipe or a log, one progress line per this many seconds at most.
    static let plainProgressInterval: Duration = .seconds(30)

    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDERR_FILENO, environment: [String: String]) {
        self.input = input
        self.output = output
        self.environment = environment
    }

    public var canAsk: Bool { isatty(input) == 1 }

    private var isTerminalOutput: Bool { isatty(output) == 1 }

    public func show(_ line: String) {
        endDots()
        emit(line + "\n")
    }

    public func ask(_ question: String, hidden: Bool) async throws(SignInFailure) -> String {
        endDots()
        // Echo goes off before the question is shown: whatever is typed after seeing it stays hidden.
        let echo = hidden ? HiddenInput(descriptor: input) : nil
        emit(question)
        let answer = await LineReader.readLine(from: input, onCancel: { echo?.restore() })
        echo?.restore()
        if Task.isCancelled {
            emit("\n")
            throw .cancelled
        }
        guard let answer else {
            emit("\n")
            throw SignInFailure(.cancelled, "No answer (end of input); sign-in cancelled.")
        }
        return answer
    }

    public func stillWaiting(_ what: String) {
        if isTerminalOutput {
            let first = progress.withLock { state -> Bool in
                defer { state.dots = true }
                return !state.dots
            }
            emit(first ? what + " ." : ".")
            return
        }
        let now = ContinuousClock.now
        let due = progress.withLock { state -> Bool in
            guard let last = state.lastLine, now - last < Self.plainProgressInterval else {
                state.lastLine = now
                return true
            }
            return false
        }
        if due { emit(what + "…\n") }
    }

    public func openBrowser(_ url: String) async -> Bool {
        guard let command = BrowserCommand.find(environment: environment) else { return false }
        return await command.open(url)
    }

    private func endDots() {
        let open = progress.withLock { state -> Bool in
            defer { state.dots = false }
            return state.dots
        }
        if open { emit("\n") }
    }

    private func emit(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { systemWrite(output, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

#if canImport(Glibc)
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    private let systemWrite = Darwin.write
#endif
