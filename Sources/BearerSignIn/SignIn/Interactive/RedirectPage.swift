import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The page the browser shows after coming back to the loopback listener: it tells the person whether the
/// sign-in worked and that they can close the tab. Never shows the code.
enum RedirectPage {
    static func html(for callback: AuthorizationCallback, expectedState: String) -> String {
        let heading: String
        let detail: String
        if callback.state != expectedState {
            heading = "Sign-in not accepted"
            detail = "This answer does not belong to the sign-in bearer-proxy started; nothing was signed in."
        } else if let error = callback.error {
            heading = "Sign-in failed"
            detail = error + (callback.errorDescription.map { ": " + $0 } ?? "")
        } else {
            heading = "Signed in"
            detail = "bearer-proxy has what it needs."
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>bearer-proxy: \(escape(heading))</title></head>
            <body style="font-family: sans-serif; margin: 3em">
            <h1>\(escape(heading))</h1>
            <p>\(escape(detail))</p>
            <p>You can close this tab and return to the terminal.</p>
            </body></html>
            """
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
