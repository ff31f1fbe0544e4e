/// Which HTTP version a route speaks to its upstream (`upstreamProtocol`).
public enum UpstreamProtocol: String, Sendable, Hashable, CaseIterable {
    /// HTTP/1.1 (RFC 9112), the default: on `https`, TLS offers only `http/1.1` in ALPN.
    case http1 = "http/1.1"
    /// HTTP/2 (RFC 9113): on `https`, TLS offers only `h2` in ALPN and a server that picks nothing else is refused;
    /// on `http`, clear text with prior knowledge (RFC 9113 §3.3) — the client preface goes first, no upgrade.
    case h2
    /// On `https`, ALPN offers `h2` and `http/1.1` and the connection speaks what the server picks (RFC 7301 §3.2);
    /// a server that picks nothing gets HTTP/1.1. On `http`, HTTP/1.1: clear text has no negotiation to ask.
    case auto
}
