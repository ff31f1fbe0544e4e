/// The ALPN protocol identifiers the proxy offers its upstreams (RFC 7301 §6; RFC 9113 §3.2).
enum UpstreamALPN {
    static let h2 = "h2"
    static let http1 = "http/1.1"
}
