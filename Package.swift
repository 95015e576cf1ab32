// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "so",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "so", targets: ["so"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // Effect seams and shared vocabulary: errors, diagnostics, file system, processes, clock, entropy, strict YAML reading.
        .target(name: "SoBasics", dependencies: [.product(name: "Yams", package: "Yams")]),
        // Compose files as users write them: model, interpolation, env files.
        .target(name: "SoCompose", dependencies: ["SoBasics"]),
        // stack.yml, spec.yml, deployment.yml, config.env, stack resolution.
        .target(name: "SoStack", dependencies: ["SoBasics", "SoCompose"]),
        // Pure rendering (kind-config.yml now; Kubernetes manifests later).
        .target(name: "SoRender", dependencies: ["SoBasics", "SoStack"]),
        // Use cases that sequence effects through the context.
        .target(name: "SoActions", dependencies: ["SoBasics", "SoCompose", "SoStack", "SoRender"]),
        // ArgumentParser commands.
        .target(name: "SoCLI", dependencies: [
            "SoBasics", "SoStack", "SoActions",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "so", dependencies: ["SoCLI"]),
        .target(name: "SoTestSupport", dependencies: ["SoBasics"]),
        .testTarget(name: "SoComposeTests", dependencies: ["SoCompose", "SoTestSupport"]),
        .testTarget(name: "SoStackTests", dependencies: ["SoStack", "SoRender", "SoTestSupport"]),
        .testTarget(name: "SoActionsTests", dependencies: ["SoActions", "SoTestSupport"]),
        .testTarget(name: "SoCLITests", dependencies: ["SoCLI", "SoActions", "SoTestSupport"], exclude: ["BadInput"]),
    ]
)
