// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "so",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "so", targets: ["so"])
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // Effect seams and shared vocabulary: errors, diagnostics, file system, processes, clock, entropy, strict YAML reading.
        .target(
            name: "SoBasics", dependencies: ["CLibcrypto", .product(name: "Yams", package: "Yams")],
            exclude: ["README.md"]),
        // The system's libcrypto (OpenSSL 3): SHA-256, HMAC-SHA256, the constant-time compare and RS256 signing
        // (SoBasics' SHA256.swift, HMAC.swift, RSAPrivateKey.swift). Linked, not built: nothing is added to a clean build's time.
        .systemLibrary(name: "CLibcrypto", path: "SystemLibraries/CLibcrypto", providers: [.apt(["libssl-dev"])]),
        // The live effects (a leaf, as SoKubeHTTP is): the local file system, programs run with swift-subprocess,
        // the system clock, entropy, console, resolver and host locks. Only the CLI's live context and the HTTP
        // client's credentials reach them.
        .target(
            name: "SoSystem", dependencies: ["SoBasics", .product(name: "Subprocess", package: "swift-subprocess")],
            exclude: ["README.md"]),
        // Compose files as users write them: model, interpolation, env files.
        .target(
            name: "SoCompose", dependencies: ["SoBasics", .product(name: "Yams", package: "Yams")],
            exclude: ["README.md"]),
        // stack.yml, spec.yml, deployment.yml, config.env, stack resolution.
        .target(name: "SoStack", dependencies: ["SoBasics", "SoCompose"], exclude: ["README.md"]),
        // Kubernetes objects as ordered values, with deterministic YAML/JSON encoding.
        .target(name: "SoKube", dependencies: ["SoBasics"], exclude: ["README.md"]),
        // The live ClusterClient over HTTPS (the only module that builds AsyncHTTPClient/NIOSSL: a leaf).
        .target(
            name: "SoKubeHTTP",
            dependencies: [
                "SoBasics", "SoKube", "SoSystem",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ], exclude: ["README.md"]),
        // Pure rendering: deployment model → ordered Kubernetes objects; kind-config.yml.
        .target(
            name: "SoRender", dependencies: ["SoBasics", "SoStack", "SoCompose", "SoKube"], exclude: ["README.md"]),
        // What every use case shares: the context (every effect an action may touch) and progress reporting.
        .target(
            name: "SoActions",
            dependencies: [
                "SoBasics", "SoCompose", "SoStack", "SoKube", "SoRender",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"]),
        // The system's zlib (gzip of a deployment's record in the cluster, as Helm stores releases).
        .systemLibrary(name: "CZlib", path: "SystemLibraries/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Deploying: init, create, start as steps, stop, the observe verbs, render, list and cleanup.
        .target(
            name: "SoDeploy",
            dependencies: ["SoActions", "SoBasics", "SoCompose", "SoStack", "SoKube", "SoRender", "CZlib"],
            exclude: ["README.md"]),
        // Agent workspaces: up, down, the source carried in, the git verbs, task.
        .target(
            name: "SoWorkspace", dependencies: ["SoDeploy", "SoActions", "SoBasics", "SoStack", "SoKube", "SoRender"],
            exclude: ["README.md"]),
        // The GitHub loop: deliveries, the inbox, the planner, the executor, threads, GitHub's REST API, the App's
        // tokens, and the forge of tasks given with --issue and --pr; over SoWorkspace's actions, as the CLI is.
        .target(
            name: "SoGitHub",
            dependencies: ["SoWorkspace", "SoDeploy", "SoActions", "SoBasics", "SoStack", "SoKube", "SoRender"],
            exclude: ["README.md"]),
        // Writing stacks: stack new and info, build-containers, fetch-stack, setup-repositories.
        .target(
            name: "SoAuthoring", dependencies: ["SoActions", "SoBasics", "SoCompose", "SoStack", "SoKube"],
            exclude: ["README.md"]),
        // The web view's pages and the feed behind them: the cluster's facts, read once for every open page, as HTML
        // (pure pages over the same actions as the CLI; no HTTP server here).
        .target(
            name: "SoDashboard",
            dependencies: [
                "SoActions", "SoBasics", "SoDeploy", "SoWorkspace", "SoGitHub", "SoKube", "SoRender", "SoStack",
            ],
            exclude: ["README.md"]),
        // The web view's server (Hummingbird, a leaf as SoKubeHTTP is): routes, the token, live updates, actions.
        .target(
            name: "SoDashboardServer",
            dependencies: [
                "SoDashboard", "SoActions", "SoBasics", "SoDeploy", "SoWorkspace", "SoGitHub", "SoKube",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ], exclude: ["README.md"]),
        // ArgumentParser commands.
        .target(
            name: "SoCLI",
            dependencies: [
                "SoBasics", "SoSystem", "SoStack", "SoActions", "SoDeploy", "SoWorkspace", "SoGitHub", "SoAuthoring",
                "SoKube", "SoKubeHTTP", "SoRender", "SoDashboard", "SoDashboardServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ], exclude: ["README.md"]),
        .executableTarget(name: "so", dependencies: ["SoCLI"], exclude: ["README.md"]),
        // Fakes and harnesses for the test targets (a deployment directory over a fake cluster: it builds on SoDeploy).
        .target(
            name: "SoTestSupport", dependencies: ["SoBasics", "SoSystem", "SoKube", "SoActions", "SoDeploy"],
            exclude: ["README.md"]),
        .testTarget(name: "SoBasicsTests", dependencies: ["SoBasics"]),
        .testTarget(name: "SoSystemTests", dependencies: ["SoSystem", "SoTestSupport"]),
        .testTarget(name: "SoComposeTests", dependencies: ["SoSystem", "SoCompose", "SoTestSupport"]),
        .testTarget(name: "SoKubeTests", dependencies: ["SoSystem", "SoKube", "SoBasics", "SoTestSupport"]),
        .testTarget(
            name: "SoKubeHTTPTests",
            dependencies: [
                "SoSystem",
                "SoKubeHTTP", "SoKube", "SoBasics", "SoTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .testTarget(
            name: "SoStackTests",
            dependencies: ["SoSystem", "SoStack", "SoTestSupport", .product(name: "Yams", package: "Yams")]),
        .testTarget(
            name: "SoRenderTests",
            dependencies: ["SoSystem", "SoRender", "SoKube", "SoStack", "SoActions", "SoDeploy", "SoTestSupport"],
            exclude: ["Golden", "Stacks"]),
        .testTarget(name: "SoActionsTests", dependencies: ["SoActions", "SoTestSupport"]),
        .testTarget(name: "SoDeployTests", dependencies: ["SoDeploy", "SoTestSupport"]),
        // SoGitHub: a task's issue comments and pull request, through the forge the CLI gives tasks.
        .testTarget(name: "SoWorkspaceTests", dependencies: ["SoWorkspace", "SoGitHub", "SoTestSupport"]),
        .testTarget(name: "SoGitHubTests", dependencies: ["SoGitHub", "SoTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "SoAuthoringTests", dependencies: ["SoAuthoring", "SoTestSupport"]),
        .testTarget(
            name: "SoDashboardTests",
            dependencies: [
                "SoSystem", "SoDashboard", "SoDashboardServer", "SoDeploy", "SoWorkspace", "SoGitHub", "SoActions",
                "SoKube", "SoTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ], exclude: ["Golden"]),
        .testTarget(
            name: "SoCLITests",
            dependencies: [
                "SoSystem", "SoCLI", "SoActions", "SoDeploy", "SoWorkspace", "SoGitHub", "SoAuthoring", "SoCompose",
                "SoTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ], exclude: ["BadInput", "E2EStacks", "Browser", "GitHubStandIn", "ModelStandIn"]),
    ]
)

// `.ci/sanitizers`' AddressSanitizer build (SO_SANITIZE_CORE=1, with --sanitize=address, which instruments the
// dependencies too): the unit tests of the modules that need no network stack. Left out with their tests: the live
// HTTP client (SoKubeHTTP: NIO and BoringSSL), the dashboard (its server is Hummingbird's, and its tests need it)
// and the commands (built on both).
if Context.environment["SO_SANITIZE_CORE"] == "1" {
    let networked: Set<String> = [
        "SoKubeHTTP", "SoDashboard", "SoDashboardServer", "SoCLI", "so", "SoKubeHTTPTests", "SoDashboardTests",
        "SoCLITests",
    ]
    package.targets.removeAll { networked.contains($0.name) }
    package.products = []
}

// `.ci/sanitizers`' ThreadSanitizer build (SO_SANITIZE_OURS=thread, without --sanitize): every target of this
// package compiled and linked with the sanitizer, its dependencies (NIO, BoringSSL, Hummingbird, Yams,
// swift-subprocess) built plainly, so that the whole package's tests fit in CI.
if let sanitizer = Context.environment["SO_SANITIZE_OURS"], ["thread", "address"].contains(sanitizer) {
    for target in package.targets where target.type != .system {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=\(sanitizer)"])]
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=\(sanitizer)"])]
    }
}
