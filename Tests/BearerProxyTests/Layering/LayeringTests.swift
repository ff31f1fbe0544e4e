import Foundation
import Testing

/// The layering of docs/architecture.md, checked on the sources (#23 item 6): each product target imports only the
/// targets of ours that its layer allows, and holds only the folders its layer names. Package.swift declares the
/// same dependencies, and `.ci/run` builds with `--explicit-target-dependency-import-check error`, so an import
/// that Package.swift does not declare fails the build; this test keeps the table itself from drifting upwards.
@Suite struct LayeringTests {
    /// Each target, the folders it holds, and the targets of ours it may import — lowest layer first. Mirrors
    /// docs/architecture.md's table; a target that needs more changes that table, with a reason.
    static let layers: [(target: String, folders: Set<String>, imports: Set<String>)] = [
        ("BearerCodec", ["Grammar", "Decoding", "Encoding"], []),
        ("BearerJSON", ["JSON"], []),
        ("BearerHTTP", ["HTTP"], ["BearerJSON"]),
        ("BearerTelemetry", ["Telemetry"], []),
        ("BearerConfiguration", ["Configuration"], ["BearerCodec", "BearerHTTP", "BearerJSON"]),
        (
            "BearerTokens", ["Tokens", "Persistence"],
            ["BearerConfiguration", "BearerTelemetry", "BearerHTTP", "BearerJSON"]
        ),
        (
            "BearerSignIn", ["Console", "Discovery", "SignIn", "Firebase"],
            ["BearerTokens", "BearerConfiguration", "BearerTelemetry", "BearerHTTP", "BearerJSON"]
        ),
        (
            "BearerDataPlane",
            [
                "Listening", "ClientConnection", "HTTP2", "Routing", "Exchange", "Upstream", "Tunnel", "Forwarding",
                "Errors", "Safety",
            ],
            ["BearerCodec", "BearerTokens", "BearerConfiguration", "BearerTelemetry", "BearerHTTP", "BearerJSON"]
        ),
        (
            "BearerOperations", ["Operations", "Admin"],
            [
                "BearerDataPlane", "BearerSignIn", "BearerTokens", "BearerConfiguration", "BearerTelemetry",
                "BearerHTTP", "BearerJSON",
            ]
        ),
        (
            "BearerRuntime", ["Runtime"],
            [
                "BearerOperations", "BearerDataPlane", "BearerSignIn", "BearerTokens", "BearerConfiguration",
                "BearerTelemetry", "BearerHTTP", "BearerJSON",
            ]
        ),
    ]

    static let sources = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    static var ours: Set<String> { Set(layers.map(\.target)) }

    /// The modules `file` imports, whatever the attributes (`@testable`, `@_exported`) or the `#if` around them.
    static func imports(of file: URL) throws -> [String] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
            guard words.count >= 2, words[0] == "import" else { return nil }
            // `import struct Module.Type`: the module is the first component of the last word.
            return words.last.map { String($0.split(separator: ".")[0]) }
        }
    }

    static func swiftFiles(under directory: URL) -> [URL] {
        let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        return (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }

    @Test func eachTargetImportsOnlyItsLowerLayers() throws {
        var violations: [String] = []
        for layer in Self.layers {
            let files = Self.swiftFiles(under: Self.sources.appendingPathComponent(layer.target))
            #expect(!files.isEmpty, "no sources for \(layer.target)")
            for file in files {
                for module in try Self.imports(of: file) where Self.ours.contains(module) {
                    if !layer.imports.contains(module) {
                        violations.append("\(layer.target)/\(file.lastPathComponent) imports \(module)")
                    }
                }
            }
        }
        #expect(violations.isEmpty, "imports above the layer: \(violations)")
    }

    @Test func eachFolderIsInItsLayersTarget() throws {
        let productTargets = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path)
            .filter { $0 != "bearer-proxy" }.sorted()
        #expect(productTargets == Self.ours.sorted(), "Sources/ holds targets the table does not name")
        for layer in Self.layers {
            let folders = try FileManager.default.contentsOfDirectory(
                atPath: Self.sources.appendingPathComponent(layer.target).path)
            #expect(Set(folders) == layer.folders, "\(layer.target) holds \(folders.sorted())")
        }
    }

    /// Each layer may import only targets listed before it: the table has no cycle and no upward edge.
    @Test func theTableOnlyPointsDownwards() {
        var below: Set<String> = []
        for layer in Self.layers {
            #expect(layer.imports.isSubset(of: below), "\(layer.target) imports a layer above it")
            below.insert(layer.target)
        }
    }
}
