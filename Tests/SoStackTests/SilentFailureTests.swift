import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// No silent failures in the actions (issue 31): every `try?` either becomes a named warning (a
/// `diagnostics.warn` just after it) or carries a comment saying why ignoring the error is right (on its
/// line or just above it).
@Suite struct SilentFailureTests {
    @Test func everyTryQuestionMarkInTheActionsWarnsOrSaysWhy() throws {
        let fs = LocalFileSystem()
        let modules = ["SoActions", "SoDeploy", "SoWorkspace", "SoAuthoring"]
        let files = try modules.flatMap { m in
            try fs.list(Path.join(RepoPaths.root, "Sources", m)).filter { $0.hasSuffix(".swift") }.map { "\(m)/\($0)" }
        }
        #expect(files.count > 20, "the action modules found under \(RepoPaths.root)/Sources")
        var seen = 0
        var silent: [String] = []
        for file in files {
            let lines = try fs.readText(Path.join(RepoPaths.root, "Sources", file)).split(
                separator: "\n", omittingEmptySubsequences: false
            ).map(String.init)
            for (i, line) in lines.enumerated() where line.contains("try?") {
                seen += 1
                let above = lines[max(0, i - 3)..<i].contains {
                    $0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                }
                let warned = lines[(i + 1)..<min(lines.count, i + 4)].contains { $0.contains("diagnostics.warn(") }
                if !line.contains("//") && !above && !warned { silent.append("\(file):\(i + 1)") }
            }
        }
        #expect(seen > 10, "try? found in the action modules")
        #expect(silent.isEmpty, "a try? that neither warns nor says why: \(silent)")
    }
}
