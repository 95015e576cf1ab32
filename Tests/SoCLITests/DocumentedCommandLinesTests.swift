import ArgumentParser
import Foundation
import SoBasics
import SoCompose
import SoSystem
import SoTestSupport
import Testing

@testable import SoCLI

/// Every `so` command line the documentation shows — README.md, docs/, the example pipeline and every
/// `--help` example — goes through the parser as a user would type it, so documentation and parser
/// cannot disagree.
@Suite struct DocumentedCommandLinesTests {
    /// A command line found in a document, with where it was found.
    struct Shown: CustomStringConvertible {
        var words: [String]
        var source: String
        var description: String { "\(source): so \(words.joined(separator: " "))" }
    }

    /// `so …` (or `.build/debug/so …`) segments of a shell line: comments, redirections and `&&`/`||`/`;`/`|`
    /// chains taken apart.
    static func commands(inShellLine raw: String, source: String) -> [Shown] {
        var line = raw.trimmingCharacters(in: .whitespaces)
        if line.hasPrefix("$ ") { line.removeFirst(2) }
        if let hash = line.range(of: " #") { line = String(line[..<hash.lowerBound]) }
        var out: [Shown] = []
        let segments = line.components(separatedBy: "&&").flatMap { $0.components(separatedBy: "||") }.flatMap {
            $0.components(separatedBy: ";")
        }
        for segment in segments {
            let piece = segment.components(separatedBy: " | ").first ?? segment
            guard var words = try? ShellWords.split(piece), let first = words.first,
                first == "so" || first.hasSuffix("/so")
            else { continue }
            words.removeFirst()
            if let redirect = words.firstIndex(where: { $0 == ">" || $0 == ">>" || $0 == "2>&1" }) {
                words = Array(words[..<redirect])
            }
            out.append(Shown(words: words, source: source))
        }
        return out
    }

    /// Shell lines with `\` continuations joined, each with the number of its first line.
    static func joinedLines(_ lines: [String], firstLine: Int) -> [(Int, String)] {
        var out: [(Int, String)] = []
        var pending: (Int, String)?
        for (i, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let continued = trimmed.hasSuffix("\\")
            let body = continued ? String(trimmed.dropLast()) : trimmed
            if var p = pending {
                p.1 += " " + body
                pending = p
            } else {
                pending = (firstLine + i, body)
            }
            if !continued, let p = pending {
                out.append(p)
                pending = nil
            }
        }
        if let p = pending { out.append(p) }
        return out
    }

    /// Lines of fenced shell blocks, and inline code spans that are whole command lines: they hold an
    /// option and no placeholder (`so up` or `so deployment --dir D start|stop|…` in prose name commands).
    static func commands(inMarkdown text: String, file: String) -> [Shown] {
        var out: [Shown] = []
        var fence: String?
        var block: [String] = []
        var blockStart = 0
        var prose = ""
        var proseLines: [Int] = []  // the line of each character offset's line start in `prose`
        for (n, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                if let lang = fence {
                    if ["sh", "bash", "console", "shell", ""].contains(lang) {
                        for (l, joined) in joinedLines(block, firstLine: blockStart) {
                            out += commands(inShellLine: joined, source: "\(file):\(l)")
                        }
                    }
                    fence = nil
                } else {
                    fence = String(trimmed.dropFirst(3))
                    block = []
                    blockStart = n + 2
                }
                continue
            }
            if fence != nil {
                block.append(line)
                continue
            }
            proseLines.append(contentsOf: Array(repeating: n + 1, count: line.count + 1))
            prose += line + " "
        }
        var offset = 0
        for (i, piece) in prose.components(separatedBy: "`").enumerated() {
            defer { offset += piece.count + 1 }
            guard i % 2 == 1, piece.hasPrefix("so "), piece.contains(" -"),
                !piece.contains(where: { "[]|…<>".contains($0) })
            else { continue }
            out += commands(inShellLine: piece, source: "\(file):\(proseLines[min(offset, proseLines.count - 1)])")
        }
        return out
    }

    /// `run:` scripts of the example pipelines.
    static func commands(inWorkflow text: String, file: String) -> [Shown] {
        joinedLines(text.components(separatedBy: "\n"), firstLine: 1).flatMap { n, line in
            commands(inShellLine: line, source: "\(file):\(n)")
        }
    }

    /// The `Example:` lines of every command's help, from the commands' configurations.
    static func helpExamples() -> [Shown] {
        var out: [Shown] = []
        func visit(_ c: ParsableCommand.Type, path: String) {
            let d = c.configuration.discussion
            if let r = d.range(of: "Example:") {
                for line in d[r.upperBound...].components(separatedBy: "\n") {
                    out += commands(inShellLine: line, source: "so \(path) --help")
                }
            }
            for s in c.configuration.subcommands {
                let name = s.configuration.commandName ?? ""
                visit(s, path: path.isEmpty ? name : path + " " + name)
            }
        }
        visit(SoCommand.self, path: "")
        return out
    }

    static func documented() throws -> [Shown] {
        let fs = LocalFileSystem()
        var shown: [Shown] = []
        shown += commands(inMarkdown: try fs.readText(Path.join(RepoPaths.root, "README.md")), file: "README.md")
        for doc in try fs.list(Path.join(RepoPaths.root, "docs")) where doc.hasSuffix(".md") {
            shown += commands(inMarkdown: try fs.readText(Path.join(RepoPaths.root, "docs", doc)), file: "docs/\(doc)")
        }
        // The pipelines' steps: GitHub Actions `run:` blocks and the Kubernetes Job's script.
        for folder in ["examples/github-actions", "examples/k8s-job"] {
            for file in try fs.list(Path.join(RepoPaths.root, folder)) where file.hasSuffix(".yml") {
                shown += commands(
                    inWorkflow: try fs.readText(Path.join(RepoPaths.root, folder, file)), file: "\(folder)/\(file)")
            }
        }
        return shown + helpExamples()
    }

    @Test func everyDocumentedCommandLineParses() throws {
        let shown = try Self.documented()
        // The documents show many command lines; a parser that found none would prove nothing.
        #expect(shown.count > 60, "found only \(shown.count) command lines")
        for s in shown {
            do {
                _ = try SoCommandLine.parse(s.words)
            } catch {
                let code = SoCommand.exitCode(for: error)
                #expect(code == .success, "\(s) does not parse: \(SoCommand.message(for: error))")
            }
        }
    }

    /// The line with the options written before its last subcommand moved after it (the flags of `so` take no value).
    static func verbFirst(_ words: [String]) -> [String] {
        var command: ParsableCommand.Type = SoCommand.self
        var path: [String] = []
        var moved: [String] = []
        var i = 0
        while i < words.count {
            let word = words[i]
            if let child = SoCommandLine.child(of: command, named: word) {
                path.append(word)
                command = child
            } else if word.hasPrefix("-") && word != "--" && !["--help", "-h", "--version"].contains(word)
                && !command.configuration.subcommands.isEmpty
            {
                moved.append(word)
                if !word.contains("="), !["--verbose", "--quiet", "--debug"].contains(word), i + 1 < words.count {
                    moved.append(words[i + 1])
                    i += 1
                }
            } else {
                break
            }
            i += 1
        }
        return path + moved + words[i...]
    }

    /// Each documented line parses to the same values as its verb-first form: where a group option stands does not matter.
    @Test func whereAGroupOptionStandsDoesNotChangeTheValues() throws {
        var moved = 0
        for s in try Self.documented() {
            let first = Self.verbFirst(s.words)
            guard first != s.words, let a = try? SoCommandLine.parse(s.words), let b = try? SoCommandLine.parse(first)
            else { continue }
            var before = ""
            var after = ""
            dump(a, to: &before)
            dump(b, to: &after)
            #expect(before == after, "\(s) and so \(first.joined(separator: " ")) differ")
            moved += 1
        }
        // Most documented lines write their options before the verb (`so deployment --dir D start`).
        #expect(moved > 40, "only \(moved) documented lines have options before the verb")
    }

    /// Options before or after the verb, as laconic-so allows; the forms a user reported broken.
    @Test(arguments: [
        ["deployment", "--name", "ws-1", "status"],
        ["deployment", "--name", "ws-1", "exec", "agent", "--", "git", "status"],
        ["deployment", "--dir", "d", "-o", "json", "status"],
        ["deployment", "--dir", "d", "--kubeconfig", "k", "--context", "c", "logs", "-f"],
        ["deploy", "--output", "x", "init", "--stack", "example"],
        ["--stack", "example", "deploy", "--deploy-to", "k8s-kind", "init", "--output", "f"],
        ["deployment", "--dir", "d", "--timeout", "5", "start"],
        ["deployment", "--name=ws-1", "shell"],
    ])
    func optionsBeforeTheVerb(_ line: [String]) throws {
        _ = try SoCommandLine.parse(line)
    }

    @Test func usageErrorsExit64() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        for line in [
            ["completion", "powershell"], ["cleanup"], ["up", "example", "--ttl", "2x"],
            ["up", "example", "--name", "Bad_Name", "--no-wait"],
            ["help", "nosuch"], ["deployment", "--dir", "d", "start", "--timeout", "-5"],
            ["deployment", "--dir", "d", "frobnicate"],
            ["deployment", "--dir", "d", "logs", "--since", "soon"], ["deployment", "status"],
            ["deployment", "--dir", "d", "stop", "--discard"],
        ] {
            let r = await runSo(line, cwd: t.path)
            #expect(r.code == 64, "\(line): \(r.code) \(r.stderr)")
            #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains("\nhint: "), "\(line): \(r.stderr)")
        }
        let timeout = await runSo(["deployment", "--dir", "d", "start", "--timeout", "-5"], cwd: t.path)
        #expect(
            timeout.stderr.contains("'-5' is invalid for '--timeout <seconds>': not a positive number of seconds"),
            "\(timeout.stderr)")
        let discard = await runSo(["deployment", "--dir", "d", "stop", "--discard"], cwd: t.path)
        #expect(discard.stderr.hasPrefix("error: --discard goes with --delete-volumes"), "\(discard.stderr)")
    }
}
