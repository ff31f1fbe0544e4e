import Testing

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Today's data plane relaying upstream responses, on real sockets (issue #24 conditions 2 and 3, the response
/// side): what the client receives is framed alike by the three references and is the upstream's response less
/// hop-by-hop fields plus the proxy's own; a response the references do not all accept alike is not relayed as the
/// upstream's (the proxy answers 502 instead).
@Suite("Differential: upstream responses relayed by the data plane, against the three references")
struct ResponseRelayTests {

    @Test("the response corpus and seeded mutations of it, through the proxy")
    func responsesThroughTheProxy() async throws {
        let references = try await ReferenceRun.prepared()
        let corpus = ResponseCorpus.entries.map { $0.input() }
        var mutator = StreamMutator(seed: DifferentialSettings.seeds.first ?? 24, seeds: corpus)
        let inputs = (corpus + (0..<DifferentialSettings.proxyInputsPerSeed).map { _ in mutator.next() })
            .filter(ResponseTrip.relayable)
        var trips: [ResponseTrip] = []
        for input in inputs { trips.append(try await ResponseTrip.relay(input)) }
        let upstream = try await references.compare(trips.map(\.input), responses: true)
        let relayed = try await references.compare(
            trips.map { DifferentialInput(family: $0.input.family, name: "relayed", bytes: $0.relayed) },
            responses: true)
        var refusedByAReference: [String] = []
        var refusedBeyondTheReferences = 0
        for (trip, (sent, received)) in zip(trips, zip(upstream, relayed)) {
            let what =
                "\(trip.input) \(trip.input.escaped) relayed as "
                + DifferentialInput(family: "", name: "", bytes: trip.relayed).escaped
            guard received.agreement == .agree, let answer = received.agreedMessages.last else {
                Issue.record("the references do not frame what the client got alike: \(what): \(received)")
                continue
            }
            // The request's answer is the stream's first final response (and the 1xx before it); what the upstream
            // sends after it answers no request, is never relayed, and ends the upstream's connection. So the answer
            // stands when every reference framed it alike, whatever they make of the bytes after it.
            let answerAgreed = sent.agreedMessages.contains { ($0.status ?? 0) >= 200 }
            guard sent.agreement == .agree || answerAgreed else {
                // The references do not all accept the upstream's answer: the codec (`ResponseDecoder`) answers 502
                // instead. Relaying it is a finding, from the corpus and from its mutations alike.
                if answer.status != 502 {
                    refusedByAReference.append("\(what): \(sent)")
                    Issue.record("relayed what a reference refuses: \(what): \(sent)")
                }
                continue
            }
            // Informational responses first, then the final one, each the upstream's (RFC 9110 §15.2).
            let final = sent.agreedMessages.firstIndex { ($0.status ?? 0) >= 200 }
            let answered = final.map { sent.agreedMessages.prefix(through: $0) } ?? sent.agreedMessages[...]
            if answer.status == 502, let status = answered.last?.status, !(100...599).contains(status) {
                // Stricter than all three on purpose: RFC 9110 §15 calls a status outside 100–599 invalid, and a
                // client "SHOULD process the response as if it had a 5xx" — which the proxy's 502 is.
                refusedBeyondTheReferences += 1
                continue
            }
            var relayed = received.agreedMessages[...]
            if final == nil {
                // Informational responses and then no final one (the rest is not a response): the proxy's own
                // answer ends the exchange — a 502, or a 504 once the route's limit has passed (SPEC §8).
                #expect(relayed.last.map { [502, 504].contains($0.status ?? 0) } == true, "\(what)")
                relayed = relayed.dropLast()
            }
            #expect(relayed.count == answered.count, "\(what)")
            for (original, answer) in zip(answered, relayed) {
                let differences = ResponseExpectation.differences(upstream: original, relayed: answer)
                #expect(differences.isEmpty, "\(what): \(differences.joined(separator: "; "))")
            }
        }
        print(
            "Differential responses through the proxy: \(trips.count) relayed, \(refusedByAReference.count) that a "
                + "reference refuses, \(refusedBeyondTheReferences) invalid statuses answered 502")
        for finding in refusedByAReference { print("  \(finding)") }
        #expect(trips.count >= ResponseCorpus.entries.filter(\.mustAgree).count)
    }
}
