import ArgumentParser
import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import UnixSignals

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Path to routes.json (default: $BEARER_PROXY_CONFIG, else ./routes.json).")
    var config: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: "Log format: text (default) or json (one object per line).")
    var logFormat: LogFormat = .text

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    var configPath: String { config ?? environment["BEARER_PROXY_CONFIG"] ?? "routes.json" }

    /// Loads and validates the configuration, or prints every problem (one line each) and exits 2.
    func loadConfiguration() throws -> Configuration {
        do {
            return try Configuration.load(path: configPath, environment: environment)
        } catch {
            for problem in error.problems { Terminal.error("\(configPath): \(problem)") }
            let count = error.problems.count
            Terminal.error("\(configPath): \(count) problem\(count == 1 ? "" : "s"); nothing was started")
            throw ExitCode(2)
        }
    }

    /// Sends logs to stderr at the chosen level (stdout stays free for command output).
    func bootstrapLogging() {
        let level = logLevel
        let format = logFormat
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            case .json:
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// How log lines are written.
enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text
    case json
}

/// Output helpers: results on stdout, diagnostics on stderr.
enum Terminal {
    static func error(_ line: String) {
        StandardError.write(line + "\n")
    }
}

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
