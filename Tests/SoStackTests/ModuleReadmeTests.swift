import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// Every module says what it is for and what it must not do (issue 31: the docs describe the code as it is).
@Suite struct ModuleReadmeTests {
    @Test func everyModuleHasAReadmeSayingWhatItMustNotDo() throws {
        let fs = LocalFileSystem()
        let sources = Path.join(RepoPaths.root, "Sources")
        let modules = try fs.list(sources).filter { fs.isDirectory(Path.join(sources, $0)) }
        #expect(modules.count >= 9, "modules found at \(sources): \(modules)")
        var missing: [String] = []
        for module in modules {
            let readme = Path.join(sources, module, "README.md")
            guard fs.isFile(readme), let text = try? fs.readText(readme) else {
                missing.append("\(module): no README.md")
                continue
            }
            if !text.hasPrefix("# \(module)") {
                missing.append("\(module): its README does not begin with '# \(module)'")
            }
            if !text.contains("Must not") && !text.contains("must not") {
                missing.append("\(module): its README does not say what it must not do")
            }
        }
        #expect(missing.isEmpty, "\(missing)")
    }
}

/// The module graph points down (issue 31): what each module may import of `so`'s own. The live effects
/// (SoSystem) and HTTP (SoKubeHTTP) are leaves only the CLI reaches; no use-case module imports another
/// but SoWorkspace, which builds on SoDeploy, and SoGitHub, the loop over SoWorkspace's actions.
@Suite struct ModuleGraphTests {
    static let allowed: [String: Set<String>] = [
        "SoBasics": [],
        "SoSystem": ["SoBasics"],
        "SoCompose": ["SoBasics"],
        "SoStack": ["SoBasics", "SoCompose"],
        "SoKube": ["SoBasics"],
        "SoKubeHTTP": ["SoBasics", "SoKube", "SoSystem"],
        "SoRender": ["SoBasics", "SoStack", "SoCompose", "SoKube"],
        "SoActions": ["SoBasics", "SoCompose", "SoStack", "SoKube", "SoRender"],
        "SoDeploy": ["SoActions", "SoBasics", "SoCompose", "SoStack", "SoKube", "SoRender"],
        "SoWorkspace": ["SoDeploy", "SoActions", "SoBasics", "SoCompose", "SoStack", "SoKube", "SoRender"],
        "SoAuthoring": ["SoActions", "SoBasics", "SoCompose", "SoStack", "SoKube"],
        // The GitHub loop: workspaces through SoWorkspace's actions, as the CLI uses them.
        "SoGitHub": ["SoWorkspace", "SoDeploy", "SoActions", "SoBasics", "SoStack", "SoKube", "SoRender"],
        // The web view: pages and the feed over the use cases' actions; the server (Hummingbird) a leaf above them.
        "SoDashboard": [
            "SoActions", "SoBasics", "SoDeploy", "SoWorkspace", "SoGitHub", "SoKube", "SoRender", "SoStack",
        ],
        "SoDashboardServer": ["SoDashboard", "SoActions", "SoBasics", "SoDeploy", "SoWorkspace", "SoGitHub", "SoKube"],
        "SoCLI": [
            "SoBasics", "SoSystem", "SoCompose", "SoStack", "SoKube", "SoKubeHTTP", "SoRender", "SoActions", "SoDeploy",
            "SoWorkspace", "SoGitHub",
            "SoAuthoring", "SoDashboard", "SoDashboardServer",
        ],
        "so": ["SoCLI"],
        // The harnesses (a deployment directory over a fake cluster) are made with SoDeploy's init and create.
        "SoTestSupport": ["SoBasics", "SoSystem", "SoKube", "SoCompose", "SoStack", "SoActions", "SoDeploy"],
    ]

    @Test func eachModuleImportsOnlyWhatItMay() throws {
        let fs = LocalFileSystem()
        let sources = Path.join(RepoPaths.root, "Sources")
        let modules = try fs.list(sources).filter { fs.isDirectory(Path.join(sources, $0)) }
        #expect(
            Set(modules) == Set(Self.allowed.keys),
            "a module without a rule, or a rule without a module: \(modules.sorted())")
        var wrong: [String] = []
        for module in modules {
            for f in try fs.walk(Path.join(sources, module)) where f.relative.hasSuffix(".swift") {
                for line in try fs.readText(Path.join(sources, module, f.relative)).split(separator: "\n") {
                    let words = line.split(separator: " ").map(String.init)
                    guard let i = words.firstIndex(of: "import"), i + 1 < words.count,
                        words[i + 1].hasPrefix("So") || words[i + 1] == "so"
                    else { continue }
                    if !(Self.allowed[module] ?? []).contains(words[i + 1]) {
                        wrong.append("\(module)/\(f.relative) imports \(words[i + 1])")
                    }
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }
}

/// The test tree mirrors the modules (issue 56): a test target is named for the module it tests and imports only
/// that module, what that module may import, and the test support; each module's README names where its tests are.
@Suite struct TestTreeTests {
    /// A target that tests more than one module, and the modules it tests.
    static let tested: [String: [String]] = ["SoDashboardTests": ["SoDashboard", "SoDashboardServer"]]
    /// Files that go through a use case above their module on purpose, each with why.
    static let crossing: [String: String] = [
        // Every built-in stack rendered from its deployment directory as `so` makes it: init and create first.
        "SoRenderTests/GoldenTests.swift": "renders what deploy init and create made",
        // Compose's interpolation followed alike by deploy create (SoDeploy) and build-containers (SoAuthoring).
        "SoAuthoringTests/ComposeParityTests.swift": "compose parity of create and build-containers",
        // A stack `stack new` wrote is deployed as any other: init and create.
        "SoAuthoringTests/StackNewActionTests.swift": "deploys the stack it wrote",
        // A task's issue comments and pull request go through the forge the CLI gives it (SoGitHub's).
        "SoWorkspaceTests/TaskCommentsTests.swift": "a task's issue comments through GitHubTaskForge",
        "SoWorkspaceTests/WorkspaceGitActionTests.swift": "a task's pull request through GitHubTaskForge",
    ]

    static var testTargets: [String] {
        get throws {
            let fs = LocalFileSystem()
            let tests = Path.join(RepoPaths.root, "Tests")
            return try fs.list(tests).filter { $0 != "Fixtures" && fs.isDirectory(Path.join(tests, $0)) }.sorted()
        }
    }

    @Test func everyTestTargetIsNamedForTheModuleItTests() throws {
        let fs = LocalFileSystem()
        var wrong: [String] = []
        for target in try Self.testTargets {
            guard target.hasSuffix("Tests") else {
                wrong.append("\(target): not named <Module>Tests")
                continue
            }
            for module in Self.tested[target] ?? [String(target.dropLast("Tests".count))]
            where !fs.isDirectory(Path.join(RepoPaths.root, "Sources", module)) {
                wrong.append("\(target): no module Sources/\(module)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    @Test func aTestTargetImportsItsModuleAndWhatItsModuleMayImport() throws {
        let fs = LocalFileSystem()
        var wrong: [String] = []
        for target in try Self.testTargets {
            let modules = Self.tested[target] ?? [String(target.dropLast("Tests".count))]
            let may = Set(modules).union(modules.flatMap { ModuleGraphTests.allowed[$0] ?? [] })
                .union(["SoTestSupport", "SoSystem"])
            let dir = Path.join(RepoPaths.root, "Tests", target)
            for f in try fs.walk(dir)
            where f.relative.hasSuffix(".swift") && Self.crossing["\(target)/\(f.relative)"] == nil {
                for line in try fs.readText(Path.join(dir, f.relative)).split(separator: "\n") {
                    let words = line.split(separator: " ").map(String.init)
                    guard words.first == "import" || words.first == "@testable", let last = words.last,
                        words.contains("import"), last.hasPrefix("So"), !may.contains(last)
                    else { continue }
                    wrong.append("\(target)/\(f.relative) imports \(last)")
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    @Test func everyModuleReadmeNamesItsTests() throws {
        let fs = LocalFileSystem()
        let sources = Path.join(RepoPaths.root, "Sources")
        let targets = try Self.testTargets
        var missing: [String] = []
        for module in try fs.list(sources) where fs.isDirectory(Path.join(sources, module)) {
            let text = (try? fs.readText(Path.join(sources, module, "README.md"))) ?? ""
            let own = targets.filter { (Self.tested[$0] ?? [String($0.dropLast("Tests".count))]).contains(module) }
            if own.isEmpty {
                if !text.contains("Tests: ") {
                    missing.append("\(module): its README does not say where its tests are")
                }
            } else if let target = own.first, !text.contains("Tests/\(target)") {
                missing.append("\(module): its README does not name Tests/\(target)")
            }
        }
        #expect(missing.isEmpty, "\(missing)")
    }
}
