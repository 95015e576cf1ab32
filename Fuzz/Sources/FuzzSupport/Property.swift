import Foundation
import SoBasics

/// What every target shares: the input as text, its parts, and the properties' checks. A check that fails
/// prints what it saw and aborts, so libFuzzer saves the input as a crash (a plain `precondition` is not
/// enough: it prints nothing of the values).
public enum Fuzz {
    /// The input bytes as UTF-8 text (invalid bytes become U+FFFD, as `so` reads files).
    public static func text(_ start: UnsafeRawPointer, _ count: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    }

    public static func data(_ start: UnsafeRawPointer, _ count: Int) -> Data { Data(bytes: start, count: count) }

    /// The input cut at its first NUL: the first file, and the second (empty without a NUL). Seeds without a
    /// NUL exercise the first parser alone.
    public static func split(_ text: String) -> (String, String) {
        guard let nul = text.firstIndex(of: "\0") else { return (text, "") }
        return (String(text[..<nul]), String(text[text.index(after: nul)...]))
    }

    /// Aborts with `what` (and the values involved) when `condition` is false.
    public static func check(
        _ condition: @autoclosure () -> Bool, _ what: @autoclosure () -> String, file: StaticString = #file,
        line: UInt = #line
    ) {
        guard !condition() else { return }
        FileHandle.standardError.write(Data("fuzz property failed (\(file):\(line)): \(what())\n".utf8))
        abort()
    }

    /// An error about `text` names a line that exists in it (1-based), and only the file it was given.
    public static func checkLocation(_ error: Error, in text: String, file: String) {
        guard let e = error as? SoError, let location = e.location else { return }
        guard location.file == file else { return }  // another file (a missing include): not this text's lines
        guard let line = location.line else { return }
        check(line >= 1 && line <= lineCount(text), "error names line \(line) of \(lineCount(text)): \(e)")
    }

    /// Lines as generously as any reader counts them (YAML breaks lines at CR, LF, CRLF, NEL, LS and PS): a
    /// final line without a break counts; an empty text has one line. Not `YAMLFile`'s count, on purpose: the check
    /// is its own, and more lenient (the empty line after a final break counts here).
    public static func lineCount(_ text: String) -> Int {
        var n = 1
        var afterCR = false
        for u in text.unicodeScalars {
            switch u.value {
            case 0x0A: if !afterCR { n += 1 }
            case 0x0D, 0x85, 0x2028, 0x2029: n += 1
            default: break
            }
            afterCR = u.value == 0x0D
        }
        return n
    }

    /// A warning about `text` names a line that exists in it.
    public static func checkLocations(_ diagnostics: [Diagnostic], in text: String, file: String) {
        for d in diagnostics {
            guard let location = d.location, location.file == file, let line = location.line else { continue }
            check(line >= 1 && line <= lineCount(text), "warning names line \(line) of \(lineCount(text)): \(d)")
        }
    }

    /// What a read gave, as text to compare (a dump of the value, or the error), and the error.
    public static func outcome(_ body: () throws -> Any) -> (text: String, error: Error?) {
        do {
            return (canonical(try body()), nil)
        } catch {
            return ("error: \(error)", error)
        }
    }

    /// Reads twice: the same value or the same error both times (a parser keeps no state between calls, and
    /// what it makes does not depend on a hash seed or the clock); an error names a line of `text`.
    @discardableResult
    public static func deterministic(_ text: String, file: String, _ body: () throws -> Any) -> Error? {
        let first = outcome(body)
        let second = outcome(body)
        check(first.text == second.text, "two reads differ:\n\(first.text)\n---\n\(second.text)")
        if let error = first.error { checkLocation(error, in: text, file: file) }
        return first.error
    }

    /// A value as text, every part of it, dictionaries and sets in sorted order (a dump would show their order,
    /// which differs between two equal dictionaries); Yams' tags (which hold its resolver's tables) by name, and
    /// the input's own YAML nodes by their place.
    public static func canonical(_ value: Any, depth: Int = 0) -> String {
        guard depth < 64 else { return "…" }
        if let data = value as? Data { return "Data(\(Array(data)))" }  // its mirror shows where it is in memory
        // A node of the input (the tree as read, which a value keeps for its errors): where it is, not all of it.
        if let node = value as? YNode { return "YNode(\(node.location))" }
        let m = Mirror(reflecting: value)
        let type = String(reflecting: m.subjectType)
        if type.hasPrefix("Yams.Tag") || type.hasPrefix("Yams.Constructor") || type.hasPrefix("Yams.Resolver") {
            return type
        }
        let parts = m.children.map { ($0.label.map { $0 + ": " } ?? "") + canonical($0.value, depth: depth + 1) }
        switch m.displayStyle {
        case .dictionary?, .set?: return type + "[" + parts.sorted().joined(separator: ", ") + "]"
        case nil: return String(reflecting: value)
        default: return parts.isEmpty ? String(reflecting: value) : type + "(" + parts.joined(separator: ", ") + ")"
        }
    }

    /// As above, for a reader that warns: its warnings are part of what it gives, and name lines that exist.
    @discardableResult
    public static func deterministic(_ text: String, file: String, _ body: (DiagnosticSink) throws -> Any) -> Error? {
        deterministic(text, file: file) { () throws -> Any in
            let sink = DiagnosticSink()
            let value = try body(sink)
            checkLocations(sink.all, in: text, file: file)
            return (value, sink.all.map(\.description))
        }
    }

    /// `text` with every `$` doubled: what interpolation reads back as the text itself.
    public static func dollarsDoubled(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            out.append(u)
            if u == "$" { out.append(u) }
        }
        return String(out)
    }
}
