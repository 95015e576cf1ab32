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
/// but SoWorkspace, which builds on SoDeploy.
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
        // The web view: pages and the feed over the use cases' actions; the server (Hummingbird) a leaf above them.
        "SoDashboard": ["SoActions", "SoBasics", "SoDeploy", "SoWorkspace", "SoKube", "SoRender", "SoStack"],
        "SoDashboardServer": ["SoDashboard", "SoActions", "SoBasics", "SoDeploy", "SoWorkspace", "SoKube"],
        "SoCLI": [
            "SoBasics", "SoSystem", "SoCompose", "SoStack", "SoKube", "SoKubeHTTP", "SoRender", "SoActions", "SoDeploy",
            "SoWorkspace",
            "SoAuthoring", "SoDashboard", "SoDashboardServer",
        ],
        "so": ["SoCLI"],
        "SoTestSupport": ["SoBasics", "SoSystem", "SoKube"],
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
