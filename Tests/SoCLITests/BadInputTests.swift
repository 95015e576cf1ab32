import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoCLI
import SoDeploy
import SoSystem
import SoTestSupport
import SoWorkspace
import Testing

/// The bad-input corpus: every case under BadInput/ is a command line (`cmd`, one word per line),
/// its input files (`input/`), optional set-up (`setup.json`: a 50 MB file, a binary file, a symlink,
/// a directory where a file should be) and the text its error line must contain (`expect`).
/// Each must exit non-zero with exactly one `error: …` line and one `hint: …` line (warnings aside),
/// and leave the working directory exactly as it was.
enum BadInput {
    static let directory = Path.join(Path.dirname(#filePath), "BadInput")
    static var names: [String] { (try? LocalFileSystem().list(directory)) ?? [] }
}

@Suite struct BadInputTests {
    @Test func corpusIsLargeEnough() {
        #expect(BadInput.names.count >= 40)
    }

    @Test(arguments: BadInput.names)
    func badInputFailsCleanly(_ name: String) async throws {
        let fs = LocalFileSystem()
        let caseDir = Path.join(BadInput.directory, name)
        let work = try TempDir("so-bad-\(name)")
        defer { work.cleanup() }
        let input = Path.join(caseDir, "input")
        if fs.isDirectory(input) {
            for f in try fs.walk(input) {
                try fs.write(try fs.readData(Path.join(input, f.relative)), to: work.file(f.relative))
            }
        }
        // Placeholders in file contents and arguments.
        func fill(_ s: String) -> String {
            s.replacingOccurrences(of: "$W", with: work.path).replacingOccurrences(
                of: "$FIX", with: RepoPaths.laconicFixtures)
        }
        for f in try fs.walk(work.path) where f.kind == .file {
            let p = work.file(f.relative)
            if let text = try? fs.readText(p), text.contains("$W") { try fs.writeText(fill(text), to: p) }
        }
        if fs.isFile(Path.join(caseDir, "setup.json")) {
            let setup =
                try JSONSerialization.jsonObject(with: try fs.readData(Path.join(caseDir, "setup.json")))
                as! [String: Any]
            if let large = setup["large"] as? String {
                var data = Data("services:\n  web:\n    image: nginx\n".utf8)
                data.append(Data(repeating: UInt8(ascii: "#"), count: 50 * 1024 * 1024))
                try fs.write(data, to: work.file(large))
            }
            if let binary = setup["binary"] as? String {
                try fs.write(Data([0xff, 0xfe, 0x00, 0x80, 0x81]), to: work.file(binary))
            }
            if let link = setup["symlink"] as? [String] {
                try fs.createDirectory(Path.dirname(work.file(link[0])))
                #expect(symlink(link[1], work.file(link[0])) == 0)
            }
            if let dir = setup["mkdir"] as? String { try fs.createDirectory(work.file(dir)) }
            if let big = setup["bigfile"] as? String {
                try fs.write(Data(repeating: UInt8(ascii: "a"), count: 1_200_000), to: work.file(big))
            }
        }
        let args = try fs.readText(Path.join(caseDir, "cmd")).split(separator: "\n").map { fill(String($0)) }
        let expected = fill(try fs.readText(Path.join(caseDir, "expect")).trimmedNewlines)
        let before = try fs.walk(work.path).map(\.relative)

        let console = CapturedConsole()
        let processes = FakeProcessRunner()
        processes.missing = ["kind", "git", "kubectl", "docker"]
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: work.path), processes: processes, clock: FixedClock(),
            entropy: SeededEntropy(),
            console: console, environment: ["SO_REPO_BASE_DIR": work.file("repos")], builtInRoot: RepoPaths.root)
        let code = await SoCommandLine.execute(args, context: ctx)

        #expect(code != 0, "\(name): exit code")
        let lines = console.stderrLines.filter { !$0.isEmpty }
        let errors = lines.filter { $0.hasPrefix("error: ") }
        let hints = lines.filter { $0.hasPrefix("hint: ") }
        #expect(errors.count == 1, "\(name): \(lines)")
        #expect(hints.count == 1, "\(name): \(lines)")
        #expect(
            lines.allSatisfy { $0.hasPrefix("error: ") || $0.hasPrefix("hint: ") || $0.hasPrefix("warning: ") },
            "\(name): \(lines)")
        #expect(errors.first?.contains(expected) == true, "\(name): expected '\(expected)' in \(errors)")
        #expect(!console.stdout.contains("Fatal") && !console.stderr.contains("Stack dump"))
        #expect(try fs.walk(work.path).map(\.relative) == before, "\(name): files changed")
    }
}
