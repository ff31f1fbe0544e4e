import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The person at the terminal, as the interactive sign-in flows see them: lines out, answers in, a browser.
///
/// `bearer-proxy` uses ``TerminalConsole``; tests script the answers. Everything shown goes to standard error —
/// standard output is kept for results (`bearer-proxy token` prints only the token there).
public protocol SignInConsole: Sendable {
    /// Whether someone can answer questions (standard input is a terminal).
    var canAsk: Bool { get }

    /// Shows one line.
    func show(_ line: String)

    /// Asks `question` and waits for the answer line, without its line ending. `hidden` turns echo off
    /// (passwords). Throws ``SignInFailure/cancelled`` when the task is cancelled (Ctrl-C) and a failure at end of
    /// input.
    func ask(_ question: String, hidden: Bool) async throws(SignInFailure) -> String

    /// Shows that a wait goes on; called once per poll (a dot on a terminal, an occasional line otherwise).
    func stillWaiting(_ what: String)

    /// Opens `url` in the system browser if there is one; false when there is none (the URL has been printed
    /// anyway).
    func openBrowser(_ url: String) async -> Bool
}

extension SignInConsole {
    /// Shows a sign-in URL on a line of its own (so it can be copied), opens it in the browser if there is one,
    /// and says what happens next.
    func presentSignIn(_ url: String, heading: String) async {
        show(heading)
        show("")
        show("  " + url)
        show("")
        if await openBrowser(url) {
            show("(Opened in your browser. Waiting for the sign-in to finish…)")
        } else {
            show("Open it in a browser on this machine; waiting for the sign-in to finish…")
        }
    }
}
