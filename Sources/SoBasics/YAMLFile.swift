import Foundation
import Yams

/// Strict reading of YAML files as written by people: every value keeps its file:line, scalars keep
/// their raw text (no YAML 1.1 guessing), duplicate keys and alias bombs are errors, and mappings
/// report unknown keys as warnings with a "did you mean".
public enum YAMLFile {
    /// Largest YAML file `so` reads.
    public static let maxBytes: UInt64 = 4 * 1024 * 1024
    /// Largest number of nodes a document may expand to through aliases.
    public static let maxExpandedNodes = 200_000

    /// Reads and parses `path`; nil when the document is empty (or only comments).
    public static func load(_ path: String, fs: FileSystem, what: String = "YAML file") throws -> YNode? {
        let text = try fs.readText(path, limit: maxBytes, what: what)
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws -> YNode? {
        let node: Node?
        do {
            // No implicit typing (`.basic`): scalars keep their raw text and style, which is all this
            // reader uses; the default resolver would also compile ICU regular expressions on every run.
            node = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw describe(error, file: file, lines: lineCount(text))
        } catch {
            throw SoError("\(file): cannot parse YAML: \(error)", hint: "check the file's YAML syntax")
        }
        guard let node else { return nil }
        var count = 0
        try checkExpansion(node, count: &count, file: file)
        return YNode(node, file: file)
    }

    private static func checkExpansion(_ node: Node, count: inout Int, file: String) throws {
        count += 1
        if count > maxExpandedNodes {
            throw SoError(
                "document expands to more than \(maxExpandedNodes) values through aliases",
                hint: "remove the nested anchors/aliases (this looks like an alias bomb)",
                at: SourceLocation(file: file, line: node.mark?.line))
        }
        switch node {
        case .mapping(let m):
            for (k, v) in m {
                try checkExpansion(k, count: &count, file: file)
                try checkExpansion(v, count: &count, file: file)
            }
        case .sequence(let s): for v in s { try checkExpansion(v, count: &count, file: file) }
        default: break
        }
    }

    /// YAML's line breaks, as libyaml reads them: LF, CRLF (one Character in Swift, so not an LF), CR, NEL, LS, PS.
    public static let lineBreaks: Set<Character> = ["\n", "\r\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"]

    /// The lines of `text` that hold something, as YAML breaks lines; at least one.
    static func lineCount(_ text: String) -> Int {
        let breaks = text.count { lineBreaks.contains($0) }
        let endsWithBreak = text.last.map { lineBreaks.contains($0) } ?? true
        return max(1, endsWithBreak ? breaks : breaks + 1)
    }

    /// `lines`: the text's line count. libyaml puts an error at the end of a text without a final newline on the
    /// line after it; the error names the last line instead (a line the file has).
    static func describe(_ error: YamlError, file: String, lines: Int) -> SoError {
        func at(_ mark: Mark) -> SourceLocation {
            mark.line > lines
                ? SourceLocation(file: file, line: lines)
                : SourceLocation(file: file, line: mark.line, column: mark.column)
        }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            var text = problem
            if let context { text += " (\(context.text))" }
            return SoError(
                "invalid YAML: \(text)", hint: "fix the YAML syntax at that line (indentation, quotes, colons)",
                at: at(mark))
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams sorts the keys with an order that does not hold between a scalar and a complex key (a mapping or
            // a list as a key, which it spells "<uncovertable>"): with one among them, the keys' order and the line
            // (its first key's) follow the hash order of the moment. Scalars are named in order here, complex keys
            // after them, and the line only when every duplicate is a scalar.
            let named = duplicates.filter { $0 != "<uncovertable>" }.sorted().map { "'\($0)'" }
            let complex = duplicates.count - named.count
            let all = [
                named.joined(separator: ", "),
                complex == 0 ? "" : complex == 1 ? "a complex key" : "\(complex) complex keys",
            ].filter { !$0.isEmpty }.joined(separator: " and ")
            return SoError(
                "duplicate key \(all)", hint: "a key may appear once per mapping; remove or rename the repeated one",
                at: complex == 0 ? at(context.mark) : SourceLocation(file: file))
        case .reader(let problem, _, _, _):
            return SoError("\(file): cannot read YAML: \(problem)", hint: "save the file as UTF-8 text")
        default:
            return SoError("\(file): invalid YAML: \(error)", hint: "check the file's YAML syntax")
        }
    }
}
