import Foundation

/// How much the seeded runs do: small by default (CI, under a minute together), scaled up from the environment for
/// the long run (`Tests/differential/long-run.sh`).
///
///     DIFFERENTIAL_INPUTS=1000000 DIFFERENTIAL_SEEDS=1,2,3 swift test --filter SeededDifferentialTests
enum DifferentialSettings {
    /// Mutated inputs per seed for the references against each other.
    static var inputsPerSeed: Int { integer("DIFFERENTIAL_INPUTS") ?? 10_000 }
    /// Mutated inputs per seed sent through the proxy.
    static var proxyInputsPerSeed: Int { integer("DIFFERENTIAL_PROXY_INPUTS") ?? 200 }
    /// The seeds; each gives its own inputs.
    static var seeds: [UInt64] {
        let text = ProcessInfo.processInfo.environment["DIFFERENTIAL_SEEDS"] ?? "24"
        return text.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
    }

    private static func integer(_ name: String) -> Int? {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }
    }
}
