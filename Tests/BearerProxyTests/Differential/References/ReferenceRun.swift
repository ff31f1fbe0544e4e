/// Runs the three references over a list of inputs and compares their verdicts, input by input.
struct ReferenceRun: Sendable {
    let programs: ReferencePrograms

    static func prepared() async throws -> ReferenceRun {
        ReferenceRun(programs: try await ReferencePrograms.required())
    }

    /// Each input's comparison, in the order of `inputs`: request streams, or response streams each answering a
    /// GET. The external programs run concurrently with NIO.
    func compare(_ inputs: [DifferentialInput], responses: Bool = false) async throws -> [StreamComparison] {
        async let go = programs.verdicts(inputs, by: .go, responses: responses)
        async let h11 = programs.verdicts(inputs, by: .h11, responses: responses)
        let nio = inputs.map(responses ? NIOResponseReference.responses : NIOStreamReference.requests)
        let (goVerdicts, h11Verdicts) = try await (go, h11)
        return inputs.indices.map { index in
            StreamComparison([.nio: nio[index], .h11: h11Verdicts[index], .go: goVerdicts[index]])
        }
    }
}
