import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Subprocess

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// How to open a URL in the system browser: `$BROWSER` if set (a command; `%s` stands for the URL, else the URL is
/// appended), else `open` on macOS, else `xdg-open` when there is a display to show a browser on.
package struct BrowserCommand: Sendable, Equatable {
    var words: [String]

    package static func find(environment: [String: String]) -> BrowserCommand? {
        if let browser = environment["BROWSER"]?.trimmingWhitespace(), !browser.isEmpty {
            // $BROWSER may list alternatives separated by colons; the first is used.
            let first = browser.split(separator: ":").first.map(String.init) ?? browser
            return BrowserCommand(words: first.split(separator: " ").map(String.init))
        }
        #if os(macOS)
            return BrowserCommand(words: ["open"])
        #else
            let hasDisplay = ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
            guard hasDisplay, let path = environment["PATH"] else { return nil }
            let found = path.split(separator: ":").contains {
                FileManager.default.isExecutableFile(atPath: "\($0)/xdg-open")
            }
            return found ? BrowserCommand(words: ["xdg-open"]) : nil
        #endif
    }

    func arguments(for url: String) -> [String] {
        words.contains("%s") ? words.map { $0 == "%s" ? url : $0 } : words + [url]
    }

    /// Starts the browser on `url` and returns without waiting for it, its output discarded: through
    /// `sh -c '… &'`, so a program that runs on (a browser) belongs to no one here, and as a background job of a
    /// non-interactive shell it ignores the Ctrl-C meant for us. Returns whether the shell started it.
    func open(_ url: String) async -> Bool {
        let script = "\"$@\" </dev/null >/dev/null 2>&1 &"
        do {
            let result = try await Subprocess.run(
                .path(FilePath("/bin/sh")), arguments: Arguments(["-c", script, "sh"] + arguments(for: url)),
                input: .none, output: .discarded, error: .discarded)
            return result.terminationStatus.isSuccess
        } catch {
            return false
        }
    }
}
