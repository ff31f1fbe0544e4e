/// The judgement of one trip through the proxy: the client's stream and the upstream's streams, each compared across
/// the three references, and the findings they add up to.
struct ProxyVerdict: Sendable {
    let client: StreamComparison
    let upstream: [StreamComparison]
    let findings: [ForwardingFinding]
    /// How many messages the proxy forwarded (as the references agree on the upstream's bytes).
    let forwardedCount: Int

    init(
        trip: ProxyDifferentialRun.Trip, client: StreamComparison, upstream: [StreamComparison],
        expectation: ForwardedExpectation
    ) {
        self.client = client
        self.upstream = upstream
        var findings: [ForwardingFinding] = []
        func find(_ kind: ForwardingFinding.Kind, _ detail: String) {
            findings.append(ForwardingFinding(kind: kind, input: trip.input, detail: detail))
        }
        // (b) The forwarded bytes: every reference frames them, and alike. An upstream stream may end inside a
        // message (the client went away mid-body), never in a refusal or a disagreement.
        var forwarded: [FramedMessage] = []
        for (index, comparison) in upstream.enumerated() {
            if comparison.agreement != .agree {
                let bytes = DifferentialInput(
                    family: "upstream", name: "connection \(index + 1)", bytes: trip.upstreamStreams[index])
                find(
                    comparison.agreement == .disagree && comparison.framingDiffers
                        ? .framedDifferently : .rewrittenWrongly,
                    "upstream connection \(index + 1) got \(bytes.escaped): \(comparison)")
            }
            forwarded += comparison.agreedMessages
        }
        forwardedCount = forwarded.count
        // (a) Only what every reference accepts from the client, framed alike, and in that order.
        let agreed = client.agreedMessages
        if forwarded.count > agreed.count {
            let kind: ForwardingFinding.Kind = client.framingDiffers ? .framedDifferently : .beyondAReference
            find(
                kind,
                "forwarded \(forwarded.count) message(s), the references agree on \(agreed.count): \(client); answers \(trip.answers)"
            )
        }
        // Condition 3: each forwarded message is the client's, rewritten as the SPEC says.
        for (index, message) in forwarded.enumerated() {
            let original =
                index < agreed.count
                ? agreed[index] : client.verdicts[.nio]?.messages.dropFirst(index).first?.comparable
            guard let original else { continue }
            let differences = expectation.differences(client: original, forwarded: message)
            guard !differences.isEmpty else { continue }
            let framing = differences.contains {
                $0.hasPrefix("body") || $0.hasPrefix("method") || $0.hasPrefix("target")
            }
            find(
                framing ? .framedDifferently : .rewrittenWrongly,
                "message \(index + 1): " + differences.joined(separator: "; "))
        }
        self.findings = findings
    }
}
