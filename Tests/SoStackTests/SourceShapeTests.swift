import Foundation
import Testing
import SoBasics
import SoTestSupport

/// The shape issue 24 asked of Sources, kept: no line over 160 characters, and no force unwrap, `try!` or
/// `as!` (a crash where an error with a hint belongs). String literals and comments are not code.
@Suite struct SourceShapeTests {
    static func sourceFiles() throws -> [String] {
        let fs = LocalFileSystem()
        let sources = Path.join(RepoPaths.root, "Sources")
        return try fs.walk(sources).filter { $0.kind == .file && $0.relative.hasSuffix(".swift") }.map { Path.join(sources, $0.relative) }.sorted()
    }

    /// A line with its string literals emptied and its `//` comment cut.
    static func code(_ line: String) -> String {
        var out = ""
        var inString = false, escaped = false
        var previous: Character = " "
        for ch in line {
            if inString {
                if escaped { escaped = false } else if ch == "\\" { escaped = true } else if ch == "\"" { inString = false; out.append(ch) }
            } else if ch == "\"" {
                inString = true
                out.append(ch)
            } else if ch == "/" && previous == "/" {
                out.removeLast()
                break
            } else {
                out.append(ch)
            }
            previous = ch
        }
        return out
    }

    /// `x!`, `x()!`, `a[i]!`, `try!`, `as!` — but not `!=` or a prefix `!x`.
    static func forceUnwraps(_ code: String) -> Bool {
        code.range(of: #"[A-Za-z0-9_)\]]!(?!=)"#, options: .regularExpression) != nil
    }

    @Test func theCheckSeesWhatItLooksFor() {
        #expect(Self.forceUnwraps(Self.code("let a = b!")))
        #expect(Self.forceUnwraps(Self.code("let a = try! f()")))
        #expect(Self.forceUnwraps(Self.code("let a = xs[0]!.name")))
        #expect(!Self.forceUnwraps(Self.code("if a != b, !c { say(\"done!\") } // really!")))
    }

    @Test func noLongLinesAndNoForceUnwraps() throws {
        let files = try Self.sourceFiles()
        #expect(files.count > 50, "Sources found at \(RepoPaths.root)")
        var long: [String] = [], unwraps: [String] = []
        for file in files {
            var inMultiline = false
            for (i, line) in try LocalFileSystem().readText(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let where_ = "\(file.dropFirst(RepoPaths.root.count + 1)):\(i + 1)"
                if line.count > 160 { long.append("\(where_) (\(line.count))") }
                // Multi-line string literals hold text, not code.
                if line.components(separatedBy: "\"\"\"").count % 2 == 0 { inMultiline.toggle(); continue }
                if inMultiline { continue }
                if Self.forceUnwraps(Self.code(String(line))) { unwraps.append(where_) }
            }
        }
        #expect(long.isEmpty, "lines over 160 characters: \(long)")
        #expect(unwraps.isEmpty, "force unwraps: \(unwraps)")
    }
}
