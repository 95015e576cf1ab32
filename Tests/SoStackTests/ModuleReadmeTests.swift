import Foundation
import Testing
import SoBasics
import SoTestSupport
import SoSystem

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
            if !text.hasPrefix("# \(module)") { missing.append("\(module): its README does not begin with '# \(module)'") }
            if !text.contains("Must not") && !text.contains("must not") { missing.append("\(module): its README does not say what it must not do") }
        }
        #expect(missing.isEmpty, "\(missing)")
    }
}
