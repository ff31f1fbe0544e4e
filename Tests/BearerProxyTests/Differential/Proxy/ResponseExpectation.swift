/// What the client must receive for the upstream's response (issue #24 condition 3, SPEC §8): the same status and
/// body, the upstream's fields less the hop-by-hop ones and those the proxy writes itself (`X-Request-Id`, framing),
/// plus the proxy's own request id.
enum ResponseExpectation {
    /// RFC 9110 §7.6.1 and the proxy's own (SPEC §8): never copied from the upstream's response.
    static let notRelayed: Set<String> = ForwardedExpectation.hopByHop.union([
        "x-request-id", "content-length", "transfer-encoding",
    ])

    static func differences(upstream: FramedMessage, relayed: FramedMessage) -> [String] {
        var differences: [String] = []
        if relayed.status != upstream.status {
            differences.append("status \(relayed.status ?? 0) for \(upstream.status ?? 0)")
        }
        if relayed.body != upstream.body {
            differences.append("body of \(relayed.body.count) byte(s) for \(upstream.body.count)")
        }
        let lines = upstream.fields.map(\.normalized)
        let named = Set(
            lines.filter { $0.name == "connection" }.flatMap { $0.value.split(separator: ",") }
                .map { Latin1.lowercased(String($0).trimmingWhitespace) })
        let expected = lines.filter { !notRelayed.contains($0.name) && !named.contains($0.name) }
        let received = relayed.fields.map(\.normalized).filter { !notRelayed.contains($0.name) }
        if FramedMessage.group(received) != FramedMessage.group(expected) {
            differences.append("fields \(received) for \(expected)")
        }
        // The proxy's request id goes on the final response; an informational one passes as it came.
        let isFinal = (upstream.status ?? 0) >= 200
        if isFinal, relayed.fields.filter({ $0.normalized.name == "x-request-id" }).count != 1 {
            differences.append("not one x-request-id")
        }
        return differences
    }
}
