import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The shape issue 24 asked of Sources, kept: no line over 160 characters, and no force unwrap, `try!` or
/// `as!` (a crash where an error with a hint belongs). String literals and comments are not code.
/// And issue 31's: no function (or initializer) over 80 lines, from its `func`/`init` line to its closing brace.
@Suite struct SourceShapeTests {
    static func sourceFiles() throws -> [String] {
        let fs = LocalFileSystem()
        let sources = Path.join(RepoPaths.root, "Sources")
        return try fs.walk(sources).filter { $0.kind == .file && $0.relative.hasSuffix(".swift") }.map {
            Path.join(sources, $0.relative)
        }.sorted()
    }

    /// A line with its string literals emptied and its `//` comment cut.
    static func code(_ line: String) -> String {
        var out = ""
        var inString = false
        var escaped = false
        var previous: Character = " "
        for ch in line {
            if inString {
                if escaped {
                    escaped = false
                } else if ch == "\\" {
                    escaped = true
                } else if ch == "\"" {
                    inString = false
                    out.append(ch)
                }
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
        var long: [String] = []
        var unwraps: [String] = []
        for file in files {
            var inMultiline = false
            for (i, line) in try LocalFileSystem().readText(file).split(
                separator: "\n", omittingEmptySubsequences: false
            ).enumerated() {
                let place = "\(file.dropFirst(RepoPaths.root.count + 1)):\(i + 1)"
                if line.count > 160 { long.append("\(place) (\(line.count))") }
                // Multi-line string literals hold text, not code.
                if line.components(separatedBy: "\"\"\"").count % 2 == 0 {
                    inMultiline.toggle()
                    continue
                }
                if inMultiline { continue }
                if Self.forceUnwraps(Self.code(String(line))) { unwraps.append(place) }
            }
        }
        #expect(long.isEmpty, "lines over 160 characters: \(long)")
        #expect(unwraps.isEmpty, "force unwraps: \(unwraps)")
    }

    static let longestFunction = 80
    /// Files whose functions may be longer for now (none).
    static let longFunctionsAllowed: Set<String> = []

    /// A line that declares a function or an initializer (after any attributes and modifiers).
    static func declaresFunction(_ code: String) -> Bool {
        let modifiers =
            "(?:(?:public|private|fileprivate|internal|package|static|class|override|mutating|nonisolated|final|convenience|required)"
            + "(?:\\([^)]*\\))?\\s+)*"
        return code.range(
            of: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"# + modifiers + #"(?:func|init)\b"#, options: .regularExpression)
            != nil
    }

    /// Each line's code: string literals emptied, comments cut, multi-line string literals' text left out.
    static func codeLines(_ text: String) -> [String] {
        var out: [String] = []
        var inMultiline = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let pieces = line.components(separatedBy: "\"\"\"")
            if pieces.count % 2 == 0 {
                // The code before an opening `"""`, or after a closing one.
                out.append(code(inMultiline ? pieces[pieces.count - 1] : pieces[0]))
                inMultiline.toggle()
            } else {
                out.append(inMultiline ? "" : code(line))
            }
        }
        return out
    }

    /// The functions of a file: the line each starts on and its length, from the declaration to its closing brace.
    /// A declaration without a body (a protocol's) has none: a blank line or the next declaration comes first.
    static func functions(_ text: String) -> [(line: Int, length: Int)] {
        let lines = codeLines(text)
        var out: [(line: Int, length: Int)] = []
        for (i, line) in lines.enumerated() where declaresFunction(line) {
            var depth = 0
            var opened = false
            var end: Int?
            scan: for j in i..<lines.count {
                if !opened, j > i, lines[j].trimmingCharacters(in: .whitespaces).isEmpty || declaresFunction(lines[j]) {
                    break
                }
                for ch in lines[j] {
                    if ch == "{" {
                        depth += 1
                        opened = true
                    }
                    if ch == "}" {
                        if !opened { break scan }  // the end of what holds a declaration without a body
                        depth -= 1
                    }
                    if opened && depth == 0 {
                        end = j
                        break scan
                    }
                }
            }
            if let end { out.append((i + 1, end - i + 1)) }
        }
        return out
    }

    @Test func theFunctionCheckMeasuresBodies() {
        let text = """
            protocol P {
                func needed() -> Int
            }
            struct S {
                @discardableResult
                public static func f(_ a: Int,
                                     b: String = "{") -> Int {
                    let s = "}}"  // }
                    return a
                }
                init() { }
            }
            """
        let found = Self.functions(text)
        #expect(found.map(\.line) == [6, 11], "\(found)")
        #expect(found.map(\.length) == [5, 1], "\(found)")
    }

    @Test func noLongFunctions() throws {
        var count = 0
        var long: [String] = []
        for file in try Self.sourceFiles() {
            let relative = String(file.dropFirst(RepoPaths.root.count + 1))
            let found = Self.functions(try LocalFileSystem().readText(file))
            count += found.count
            if Self.longFunctionsAllowed.contains(relative) { continue }
            for f in found where f.length > Self.longestFunction {
                long.append("\(relative):\(f.line) (\(f.length) lines)")
            }
        }
        #expect(count > 600, "only \(count) functions found in Sources: the check is not seeing them")
        #expect(long.isEmpty, "functions over \(Self.longestFunction) lines: \(long)")
    }

    /// The top-level types a source declares (`struct`, `class`, `enum`, `protocol`, `actor`; not extensions).
    static func topLevelTypes(_ text: String) -> [String] {
        let kinds: Set<String> = ["struct", "class", "enum", "protocol", "actor"]
        let skipped: Set<String> = [
            "public", "package", "internal", "private", "fileprivate", "final", "indirect", "open",
        ]
        return text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line -> String? in
            guard let first = line.first, first.isLetter || first == "@" else { return nil }
            let words = line.split(separator: " ").map(String.init).drop { $0.hasPrefix("@") || skipped.contains($0) }
            guard let kind = words.first, kinds.contains(kind), words.count > 1 else { return nil }
            return String(words[words.startIndex + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        }
    }

    @Test func theTypeCheckSeesWhatItLooksFor() {
        #expect(
            Self.topLevelTypes(
                "public final class A: B {\n    struct Inner {}\n}\n@frozen public enum C { case x }\nextension D {}\n"
                    + "open class E {}\n")
                == ["A", "C", "E"])
    }

    /// Issue 31: each type lives in a file named for it (a file may also hold extensions, or hold only them).
    @Test func eachTypeInAFileNamedForIt() throws {
        var wrong: [String] = []
        let files = try Self.sourceFiles()
        for file in files {
            let types = Self.topLevelTypes(try LocalFileSystem().readText(file))
            let stem = Path.basename(file).replacingOccurrences(of: ".swift", with: "")
            if types.count > 1 || (types.count == 1 && types[0] != stem) { wrong.append("\(file): \(types)") }
        }
        #expect(files.count > 300)
        #expect(wrong.isEmpty, "\(wrong)")
    }
}
