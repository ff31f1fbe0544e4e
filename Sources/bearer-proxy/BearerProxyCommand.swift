import ArgumentParser

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

/// `bearer-proxy`: a local reverse proxy that adds `Authorization: Bearer …` for each route's scope set.
@main
struct BearerProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bearer-proxy",
        abstract: "A local HTTP reverse proxy that signs in once and adds a bearer token per route.",
        discussion: "Every command reads routes.json (--config, $BEARER_PROXY_CONFIG, or ./routes.json).",
        subcommands: [Serve.self, Check.self, Discover.self, Login.self, Logout.self, Status.self, Token.self])

    /// SPEC §5 exit codes: 0 success, 1 runtime failure, 2 usage or configuration error — ArgumentParser's own
    /// usage code (64) is mapped to 2, and errors are one readable line on stderr.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            exitProcess(exit.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                exitProcess(0)
            }
            Terminal.error(fullMessage(for: error))
            exitProcess(code == .validationFailure ? 2 : code.rawValue == 64 ? 2 : 1)
        }
    }
}

/// The C library's `exit(3)` (which flushes stdout), named apart from `ParsableCommand.exit(withError:)`.
private func exitProcess(_ code: Int32) -> Never {
    exit(code)
}
