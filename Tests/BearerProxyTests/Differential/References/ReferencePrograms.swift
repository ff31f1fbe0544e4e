import Crypto
import Foundation
import Testing

/// The two references that run as programs (Go's net/http and Python's h11), found or built once per test run, and
/// run over whole batches of streams: one process reads a batch, so a run of a million inputs starts a few
/// processes, not a million.
///
/// In CI (`CI=true`) a missing reference fails the test that needs it, naming what to install; elsewhere the test is
/// cancelled with that reason, visible in the test report (never skipped silently).
struct ReferencePrograms: Sendable {
    /// The built Go program.
    let go: String
    /// A `python3` that imports h11.
    let python: String

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("differential")

    /// Inputs per process: bounds the memory of one batch's output.
    static let batchSize = 20_000

    /// The programs, or the test ends: failed in CI, cancelled with the reason elsewhere.
    static func required() async throws -> ReferencePrograms {
        switch await ReferenceProgramCache.shared.programs() {
        case .success(let programs):
            return programs
        case .failure(let missing):
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("\(missing.reason) (CI must install it: see .ci/run)")
                throw missing
            }
            try Test.cancel("differential reference unavailable: \(missing.reason)")
        }
    }

    /// Each input's verdict by `reference` (`.go` or `.h11`).
    func verdicts(_ inputs: [DifferentialInput], by reference: Reference, responses: Bool = false) async throws
        -> [StreamVerdict]
    {
        var verdicts: [StreamVerdict] = []
        verdicts.reserveCapacity(inputs.count)
        var start = 0
        while start < inputs.count {
            let batch = inputs[start..<min(start + Self.batchSize, inputs.count)]
            verdicts += try await run(batch, by: reference, responses: responses)
            start += batch.count
        }
        return verdicts
    }

    private func run(_ batch: ArraySlice<DifferentialInput>, by reference: Reference, responses: Bool) async throws
        -> [StreamVerdict]
    {
        let lines = batch.map { input in
            Data(input.bytes).base64EncodedString() + " " + input.splits.map(String.init).joined(separator: ",")
        }
        let (executable, arguments): (String, [String]) =
            switch reference {
            case .go: (go, ["-batch"] + (responses ? ["-responses"] : []))
            case .h11:
                (
                    python,
                    [Self.folder.appendingPathComponent("h11/frame_stream.py").path, "--batch"]
                        + (responses ? ["--responses"] : [])
                )
            case .nio: preconditionFailure("NIOHTTP1 runs in process: NIOStreamReference")
            }
        let result = try await ChildProcess.run(executable, arguments, stdin: lines.joined(separator: "\n") + "\n")
        guard result.status == 0 else {
            throw ReferenceFailure(reason: "\(reference) exited \(result.status): \(result.stderr.suffix(2000))")
        }
        let decoder = JSONDecoder()
        let verdicts = try result.stdout.split(separator: "\n").map {
            try decoder.decode(StreamVerdict.self, from: Data($0.utf8))
        }
        guard verdicts.count == batch.count else {
            throw ReferenceFailure(reason: "\(reference) answered \(verdicts.count) of \(batch.count) inputs")
        }
        return verdicts
    }
}

/// A reference that is missing or broke.
struct ReferenceFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Finds the interpreter and builds the Go program at most once per test run (an actor: the suites run in
/// parallel). The binary is kept under the account's cache folder by the hash of the program's source, so a second
/// run does not rebuild it; Go's own build cache is there too (GOCACHE must be writable by the ordinary account).
actor ReferenceProgramCache {
    static let shared = ReferenceProgramCache()

    private var found: Result<ReferencePrograms, ReferenceFailure>?

    func programs() async -> Result<ReferencePrograms, ReferenceFailure> {
        if let found { return found }
        let result: Result<ReferencePrograms, ReferenceFailure>
        do {
            async let python = Self.pythonWithH11()
            async let go = Self.buildGoProgram()
            result = .success(ReferencePrograms(go: try await go, python: try await python))
        } catch let failure as ReferenceFailure {
            result = .failure(failure)
        } catch {
            result = .failure(ReferenceFailure(reason: "\(error)"))
        }
        // Another caller may have finished first while this one waited: both found the same programs.
        found = found ?? result
        return found!
    }

    /// The account's cache folder (XDG), never the source tree: CI copies the tree afresh for every run.
    static var cacheFolder: URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("bearer-proxy-differential")
    }

    static func executable(named name: String, extra: [String] = []) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map(String.init) + extra)
            .map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func pythonWithH11() async throws -> String {
        guard let python = executable(named: "python3") else {
            throw ReferenceFailure(reason: "no python3 on PATH")
        }
        let check = try await ChildProcess.run(python, ["-c", "import h11"])
        guard check.status == 0 else {
            throw ReferenceFailure(reason: "\(python) cannot import h11 (pip install h11)")
        }
        return python
    }

    static func buildGoProgram() async throws -> String {
        let source = ReferencePrograms.folder.appendingPathComponent("go")
        return try await buildGo(
            main: source.appendingPathComponent("main.go"),
            hashing: ["go.mod", "main.go"].map { source.appendingPathComponent($0) }, folder: "go", name: "differential"
        )
    }

    /// Builds the Go program `main` once per version of the `hashing` files, as `<cache>/<folder>-<digest>/<name>`,
    /// and returns its path. It imports the standard library and, in GOPATH mode, packages from the `gopath` folders
    /// (Debian's golang-*-dev packages install theirs under /usr/share/gocode): Go has no network here to fetch
    /// modules.
    static func buildGo(
        main: URL, hashing files: [URL], folder: String, name: String, gopath: [String] = []
    ) async throws -> String {
        // Debian's golang-go puts `go` on PATH; its toolchain lives in /usr/lib/go.
        guard let go = executable(named: "go", extra: ["/usr/lib/go/bin", "/usr/local/go/bin"]) else {
            throw ReferenceFailure(reason: "no go on PATH (apt-get install golang-go)")
        }
        var hash = SHA256()
        for file in files {
            hash.update(data: try Data(contentsOf: file))
        }
        let digest = hash.finalize().map { String($0, radix: 16) }.joined().prefix(16)
        let binary = cacheFolder.appendingPathComponent("\(folder)-\(digest)/\(name)")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary.path }

        try FileManager.default.createDirectory(
            at: binary.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Built under a name of its own and renamed into place: a build that stops halfway leaves no binary that
        // looks finished.
        let partial = binary.path + ".\(ProcessInfo.processInfo.processIdentifier).partial"
        var environment = ProcessInfo.processInfo.environment
        environment["GOCACHE"] = cacheFolder.appendingPathComponent("gocache").path
        environment["GOPATH"] = ([cacheFolder.appendingPathComponent("gopath").path] + gopath).joined(separator: ":")
        // Built as a file in GOPATH mode, from any working directory (Go 1.19 has no `go -C`, and the tests' working
        // directory is not the module's).
        environment["GO111MODULE"] = "off"
        environment["CGO_ENABLED"] = "0"
        let build = try await ChildProcess.run(go, ["build", "-o", partial, main.path], environment: environment)
        guard build.status == 0 else {
            try? FileManager.default.removeItem(atPath: partial)
            throw ReferenceFailure(reason: "go build of \(main.path) failed: \(build.stderr)")
        }
        _ = rename(partial, binary.path)
        return binary.path
    }
}
