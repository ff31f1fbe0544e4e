/// When a server stops reading HTTP/1.1 on a connection after a request: CONNECT (RFC 9110 §9.3.6), or an `Upgrade`
/// field together with the `upgrade` connection option (RFC 9110 §7.8, §7.6.1) — llhttp's rule, which the Go
/// reference program follows too (net/http leaves it to the handler). h11 applies its own rule, and where that differs
/// the references disagree on the stream's end.
enum SwitchingProtocols {
    static func isUpgrade(method: String, _ fields: [(String, String)]) -> Bool {
        if method == "CONNECT" { return true }
        let hasUpgrade = fields.contains { Latin1.lowercased($0.0) == "upgrade" }
        let options = fields.filter { Latin1.lowercased($0.0) == "connection" }
            .flatMap { $0.1.split(separator: ",") }
            .map { Latin1.lowercased(String($0).trimmingWhitespace) }
        return hasUpgrade && options.contains("upgrade")
    }
}
