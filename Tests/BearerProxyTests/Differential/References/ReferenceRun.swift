/// Runs the three references over a list of inputs and compares their verdicts, input by input.
struct ReferenceRun: Sendable {
    let programs: ReferencePrograms

    static func prepared() async throws -> ReferenceRun {
        ReferenceRun(programs: try await ReferencePrograms.required())
    }

    /// Each input's comparison, in the order of `inputs`. The external programs run concurrently with NIO.
    func compare(_ inputs: [DifferentialInput]) async throws -> [StreamComparison] {
        async let go = programs.verdicts(inputs, by: .go)
        async let h11 = programs.verdicts(inputs, by: .h11)
        let nio = inputs.map(NIOStreamReference.requests)
        let (goVerdicts, h11Verdicts) = try await (go, h11)
        return inputs.indices.map { index in
            StreamComparison([.nio: nio[index], .h11: h11Verdicts[index], .go: goVerdicts[index]])
        }
    }
}
