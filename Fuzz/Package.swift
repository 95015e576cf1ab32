// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets over the parsers of outside input (README.md here). A package of its own, so that the
// root package's `swift build` never builds them (libFuzzer supplies `main`): its modules are the root's
// sources, reached through the symlinks under Parsers/ (SwiftPM refuses a target path outside the package).
// Build and run: Fuzz/run (its build flags, and why not `--sanitize=fuzzer --sanitize=address`, are there).
let yams = Target.Dependency.product(name: "Yams", package: "Yams")

let package = Package(
    name: "so-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(url: "https://github.com/jpsim/Yams", from: "6.2.2")],
    targets: [
        // The root package's parser modules, as they are (SoBasics' crypto is the system's libcrypto).
        .systemLibrary(name: "CLibcrypto", path: "Parsers/CLibcrypto", providers: [.apt(["libssl-dev"])]),
        .target(
            name: "SoBasics", dependencies: ["CLibcrypto", yams], path: "Parsers/SoBasics", exclude: ["README.md"]),
        .target(
            name: "SoCompose", dependencies: ["SoBasics", yams], path: "Parsers/SoCompose", exclude: ["README.md"]),
        .target(
            name: "SoStack", dependencies: ["SoBasics", "SoCompose"], path: "Parsers/SoStack", exclude: ["README.md"]),
        .target(name: "SoKube", dependencies: ["SoBasics"], path: "Parsers/SoKube", exclude: ["README.md"]),
        // Single files of modules too heavy to build here (SoWorkspace needs the deploy modules, the dashboard's
        // server Hummingbird): their readers of outside input, which import only what is above.
        .target(name: "SoWorkspaceReports", dependencies: ["SoBasics", "SoKube"], path: "Parsers/SoWorkspaceReports"),
        .target(name: "SoDashboardForm", path: "Parsers/SoDashboardForm"),
        // SoWorkspace's reader of GitHub's webhook deliveries (Foundation only).
        .target(name: "SoGitHubEvent", path: "Parsers/SoGitHubEvent"),
        // SoDeploy's record (its stored form, its files) and the gate's reads, with the system's zlib.
        .systemLibrary(name: "CZlib", path: "Parsers/CZlib"),
        .target(
            name: "SoRecord", dependencies: ["SoBasics", "SoCompose", "SoStack", "CZlib"], path: "Parsers/SoRecord"),
        // What the targets share: the input's parts, the checks, an in-memory file system (SoTestSupport's).
        .target(name: "FuzzSupport", dependencies: ["SoBasics"]),
        // One executable per parser (a single file each, not main.swift: no main of its own).
        .executableTarget(name: "FuzzCompose", dependencies: ["FuzzSupport", "SoBasics", "SoCompose"]),
        .executableTarget(name: "FuzzStack", dependencies: ["FuzzSupport", "SoBasics", "SoStack"]),
        .executableTarget(name: "FuzzKubeconfig", dependencies: ["FuzzSupport", "SoBasics", "SoKube"]),
        .executableTarget(name: "FuzzKubeJSON", dependencies: ["FuzzSupport", "SoBasics", "SoKube"]),
        .executableTarget(
            name: "FuzzTaskReport", dependencies: ["FuzzSupport", "SoBasics", "SoKube", "SoWorkspaceReports"]),
        .executableTarget(name: "FuzzDashboardInput", dependencies: ["FuzzSupport", "SoBasics", "SoDashboardForm"]),
        .executableTarget(name: "FuzzGitHubWebhook", dependencies: ["FuzzSupport", "SoBasics", "SoGitHubEvent"]),
        .executableTarget(
            name: "FuzzRecordGate", dependencies: ["FuzzSupport", "SoBasics", "SoCompose", "SoStack", "SoRecord"]),
    ]
)
