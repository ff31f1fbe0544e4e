// swift-tools-version: 6.1
import PackageDescription

// Every dependency is a package the build machines carry (see the `env` entry of the tool library);
// versions are the listed ones. Package.resolved is deliberately not committed.

// Release builds of the product skip the runtime exclusivity check (swift_beginAccess on each access to a class's
// stored property): 22 of the 242 checks a proxied request makes are in our code (bench/counts.sh; the other 220 are
// SwiftNIO's, which a root-package setting cannot reach — docs/benchmarks.md). Nothing relies on it. The check only
// traps on overlapping accesses to the same variable, which is a programming error, never handled; the compiler still
// enforces exclusivity statically in every build, and debug builds — which every test runs — keep the runtime check, so
// an overlap that the suite reaches traps there. Each handler's state is confined to its event loop, so there is no
// cross-thread overlap for the check to find either (Swift 6 checks that statically). A root-package setting: it covers
// our targets, not the dependencies.
//
// And cross-module optimization (release only): the data plane calls into five targets below it on every request,
// and without it the split cost 27 retains and releases per proxied request (bench/counts.sh); with it and
// HeaderName/HeaderPolicy inlinable, the counts match the single target's within one.
let releaseSettings: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release))
]

// The release executables link the Swift runtime statically, with lld, on Linux, so that what `swift build -c
// release` and `swift run -c release` give is the binary the image ships. Linked dynamically, every retain and
// release of a request goes through the PLT into libswiftCore.so: 0.69x nginx's req/s against 0.82x for the static
// build (docs/benchmarks.md). Debug builds, which the tests use, keep the toolchain's defaults.
//
// The runtime is chosen when each module is compiled, too: a module built against the static Foundation names the
// static archives' own dependencies (_FoundationCollections, CoreFoundation…) for the linker, so every target of ours
// that imports Foundation is compiled so (all but BearerCodec), and every executable that links them links so.
//
// Packed relative relocations (DT_RELR) keep the static runtime's relocated pointers out of private memory: without
// them the idle RSS is about 2.5 MiB more. The loader must know them (glibc 2.36+), and a binary runs where it was
// built, so they are used when the glibc this manifest runs on has them.
#if canImport(Glibc)
    import Glibc
    let packedRelocations: [String] = {
        var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
        _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count)
        let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let version = name.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) }
        let supported = !(version ?? []).lexicographicallyPrecedes([2, 36])
        return supported ? ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"] : []
    }()
#else
    let packedRelocations: [String] = []
#endif
let executableLinking: [LinkerSetting] = [
    .unsafeFlags(
        ["-static-stdlib", "-use-ld=lld"] + packedRelocations, .when(platforms: [.linux], configuration: .release))
]
let staticRuntime: [SwiftSetting] = [
    .unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))
]

// The layering of docs/architecture.md as targets: each lists the targets of ours it may import, all of them lower in
// this list, and the libraries it uses; nothing else can be imported (`swift build
// --explicit-target-dependency-import-check error` in .ci/run; Tests/BearerProxyTests/Layering/LayeringTests.swift
// checks the imports against the same table). The data plane and the control plane (sign-in) do not see each other;
// only the composition root (BearerRuntime) and the CLI see everything.
let layers: [(target: String, imports: [String], libraries: [String])] = [
    ("BearerCodec", [], ["NIOCore", "NIOHTTP1"]),
    ("BearerJSON", [], []),
    ("BearerHTTP", ["BearerJSON"], ["NIOCore", "NIOHTTP1", "NIOPosix", "NIOSSL"]),
    ("BearerTelemetry", [], ["NIOCore", "Metrics", "Prometheus"]),
    ("BearerConfiguration", ["BearerCodec", "BearerHTTP", "BearerJSON"], ["NIOHTTP1"]),
    ("BearerTokens", ["BearerConfiguration", "BearerTelemetry", "BearerHTTP", "BearerJSON"], ["Crypto", "Logging"]),
    (
        "BearerSignIn", ["BearerTokens", "BearerConfiguration", "BearerTelemetry", "BearerHTTP", "BearerJSON"],
        [
            "NIOCore", "NIOPosix", "NIOHTTP1", "NIOSSL", "AsyncHTTPClient", "Crypto", "_CryptoExtras", "Logging",
            "Subprocess",
        ]
    ),
    (
        "BearerDataPlane",
        ["BearerCodec", "BearerTokens", "BearerConfiguration", "BearerTelemetry", "BearerHTTP", "BearerJSON"],
        [
            "NIOCore", "NIOPosix", "NIOHTTP1", "NIOHTTP2", "NIOHPACK", "NIOSSL", "NIOTLS", "NIOExtras", "Crypto",
            "Logging", "Metrics",
            "ServiceLifecycle",
        ]
    ),
    (
        "BearerOperations",
        [
            "BearerDataPlane", "BearerSignIn", "BearerTokens", "BearerConfiguration", "BearerTelemetry", "BearerHTTP",
            "BearerJSON",
        ],
        ["NIOCore", "NIOHTTP1", "Logging"]
    ),
    (
        "BearerRuntime",
        [
            "BearerOperations", "BearerDataPlane", "BearerSignIn", "BearerTokens", "BearerConfiguration",
            "BearerTelemetry", "BearerHTTP", "BearerJSON",
        ],
        ["NIOCore", "NIOPosix", "Logging", "ServiceLifecycle", "UnixSignals"]
    ),
]
let ourTargets = layers.map(\.target)

// The libraries the product's targets use, by the name a target imports.
let libraries: [String: Target.Dependency] = [
    "NIOCore": .product(name: "NIOCore", package: "swift-nio"),
    "NIOPosix": .product(name: "NIOPosix", package: "swift-nio"),
    "NIOHTTP1": .product(name: "NIOHTTP1", package: "swift-nio"),
    "NIOHTTP2": .product(name: "NIOHTTP2", package: "swift-nio-http2"),
    "NIOHPACK": .product(name: "NIOHPACK", package: "swift-nio-http2"),
    "NIOSSL": .product(name: "NIOSSL", package: "swift-nio-ssl"),
    "NIOTLS": .product(name: "NIOTLS", package: "swift-nio"),
    "NIOExtras": .product(name: "NIOExtras", package: "swift-nio-extras"),
    "Logging": .product(name: "Logging", package: "swift-log"),
    "Crypto": .product(name: "Crypto", package: "swift-crypto"),
    "_CryptoExtras": .product(name: "_CryptoExtras", package: "swift-crypto"),
    "ServiceLifecycle": .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    "UnixSignals": .product(name: "UnixSignals", package: "swift-service-lifecycle"),
    "AsyncHTTPClient": .product(name: "AsyncHTTPClient", package: "async-http-client"),
    "Metrics": .product(name: "Metrics", package: "swift-metrics"),
    "Prometheus": .product(name: "Prometheus", package: "swift-prometheus"),
    "Subprocess": .product(name: "Subprocess", package: "swift-subprocess"),
]

/// A layer's dependencies: the targets of ours that `layers` lets it import, and the libraries it lists. (Each
/// target is declared below with its name written out: Tests/docker/lint.py reads the names to check the image's
/// COPYs.)
func dependencies(of target: String) -> [Target.Dependency] {
    let layer = layers.first { $0.target == target }
    let ours: [Target.Dependency] = (layer?.imports ?? []).map { .byName(name: $0) }
    return ours + (layer?.libraries ?? []).map { libraries[$0]! }
}

let package = Package(
    name: "bearer-proxy",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "bearer-proxy", targets: ["bearer-proxy"]),
        .library(name: "BearerProxy", targets: ourTargets),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        // The codec sees NIOCore's ByteBuffer and nothing else: it stays small enough to build on its own under
        // AddressSanitizer (bench/floor/sanitize.sh), and no library's decisions leak into its grammar.
        .target(
            name: "BearerCodec", dependencies: dependencies(of: "BearerCodec"), swiftSettings: releaseSettings),
        .target(
            name: "BearerJSON", dependencies: dependencies(of: "BearerJSON"),
            swiftSettings: releaseSettings + staticRuntime),
        .target(
            name: "BearerHTTP", dependencies: dependencies(of: "BearerHTTP"),
            swiftSettings: releaseSettings + staticRuntime),
        .target(
            name: "BearerTelemetry", dependencies: dependencies(of: "BearerTelemetry"),
            swiftSettings: releaseSettings + staticRuntime),
        .target(
            name: "BearerConfiguration", dependencies: dependencies(of: "BearerConfiguration"),
            swiftSettings: releaseSettings + staticRuntime),
        .target(
            name: "BearerTokens", dependencies: dependencies(of: "BearerTokens"),
            swiftSettings: releaseSettings + staticRuntime),
        .target(
            name: "BearerSignIn", dependencies: dependencies(of: "BearerSignIn"),
            swiftSettings: releaseSettings + staticRuntime),
        .target(
            name: "BearerDataPlane", dependencies: dependencies(of: "BearerDataPlane"),
            swiftSettings: releaseSettings + staticRuntime),
        .target(
            name: "BearerOperations", dependencies: dependencies(of: "BearerOperations"),
            swiftSettings: releaseSettings + staticRuntime
        ),
        .target(
            name: "BearerRuntime", dependencies: dependencies(of: "BearerRuntime"),
            swiftSettings: releaseSettings + staticRuntime),
        .executableTarget(
            name: "bearer-proxy",
            dependencies: ourTargets.map { .target(name: $0) } + [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: releaseSettings + staticRuntime,
            linkerSettings: executableLinking
        ),
        // Test tools, in no product: the token cache writer and lock holder that the persistence tests run as
        // separate processes.
        .target(
            name: "StateStress",
            dependencies: ourTargets.map { .target(name: $0) },
            path: "Tests/StateStress",
            swiftSettings: staticRuntime
        ),
        .executableTarget(
            name: "bearer-proxy-stress",
            dependencies: ourTargets.map { .target(name: $0) } + [
                "StateStress", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/StressTool",
            swiftSettings: staticRuntime,
            linkerSettings: executableLinking
        ),
        // The benchmark's floor (bench/floor, docs/benchmarks.md), in no product: a pass-through proxy on NIOHTTP1's
        // codecs or on BearerCodec, the data plane's own strict HTTP/1.1 codec (SPEC §3), and that codec's differential
        // fuzz tests against NIOHTTP1's decoder.
        .executableTarget(
            name: "bench-floor-proxy",
            dependencies: [
                "BearerCodec",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "bench/floor/Proxy"
        ),
        // How many DPoP proofs one core signs a second (docs/benchmarks.md, "DPoP").
        .executableTarget(
            name: "bench-dpop",
            dependencies: ["BearerTokens", .product(name: "Crypto", package: "swift-crypto")],
            path: "bench/dpop",
            swiftSettings: releaseSettings + staticRuntime,
            linkerSettings: executableLinking
        ),
        // The codec's inputs for fuzzing — a corpus of valid and hostile messages and a seeded mutator — shared by
        // its tests and by the fuzzer that bench/floor/sanitize.sh builds in release mode under AddressSanitizer.
        .target(name: "CodecFuzzing", path: "bench/floor/Fuzzing"),
        .executableTarget(
            name: "bearer-codec-fuzz",
            dependencies: [
                "BearerCodec", "CodecFuzzing", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "bench/floor/Fuzz"
        ),
        .testTarget(
            name: "BearerCodecTests",
            dependencies: [
                "BearerCodec",
                "CodecFuzzing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Tests/BearerCodecTests"
        ),
        // The benchmark's own proxies, tested where they live: what the upstream gets from each.
        .testTarget(
            name: "BenchFloorTests",
            dependencies: [
                "BearerCodec",
                "bench-floor-proxy",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "bench/floor/Tests"
        ),
        .testTarget(
            name: "BearerProxyTests",
            dependencies: ourTargets.map { .target(name: $0) } + [
                "bearer-proxy",
                "StateStress",
                "bearer-proxy-stress",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                // The tests use what the product uses.
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
