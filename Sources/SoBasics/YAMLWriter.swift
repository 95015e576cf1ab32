import Foundation

/// An ordered YAML value for writing files byte-for-byte the same every time.
public indirect enum YValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case null
    case map([(String, YValue)])
    case list([YValue])

    public static func == (a: YValue, b: YValue) -> Bool {
        switch (a, b) {
        case let (.string(x), .string(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.bool(x), .bool(y)): return x == y
        case (.null, .null): return true
        case let (.map(x), .map(y)): return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.list(x), .list(y)): return x == y
        default: return false
        }
    }

    /// Writes block-style YAML: 2-space indents, list items indented under their key, strings quoted
    /// only when a YAML 1.1 reader could take them for something else.
    public func yaml() -> String {
        var out = ""
        YAMLEmit.emit(self, indent: 0, into: &out, atLineStart: true)
        return out
    }
}

enum YAMLEmit {
    static func emit(_ v: YValue, indent: Int, into out: inout String, atLineStart: Bool) {
        let pad = String(repeating: " ", count: indent)
        switch v {
        case .map(let pairs):
            if pairs.isEmpty { out += "{}\n"; return }
            var first = true
            for (k, value) in pairs {
                if !(first && !atLineStart) { out += pad }
                first = false
                out += scalar(k) + ":"
                switch value {
                case .map(let p) where !p.isEmpty:
                    out += "\n"
                    emit(value, indent: indent + 2, into: &out, atLineStart: true)
                case .list(let l) where !l.isEmpty:
                    out += "\n"
                    emit(value, indent: indent + 2, into: &out, atLineStart: true)
                case .null:
                    out += "\n"
                default:
                    out += " "
                    emit(value, indent: indent + 2, into: &out, atLineStart: false)
                }
            }
        case .list(let items):
            if items.isEmpty { out += "[]\n"; return }
            for item in items {
                out += pad + "- "
                switch item {
                case .map(let p) where !p.isEmpty:
                    emit(item, indent: indent + 2, into: &out, atLineStart: false)
                case .list(let l) where !l.isEmpty:
                    out += "\n"
                    emit(item, indent: indent + 2, into: &out, atLineStart: true)
                default:
                    emit(item, indent: indent + 2, into: &out, atLineStart: false)
                }
            }
        case .string(let s):
            if literalBlockSafe(s) {
                // Literal block: keep the text readable; the chomping indicator keeps trailing newlines exact.
                let chomp: String
                if s.hasSuffix("\n\n") || s == "\n" { chomp = "|+" } else if s.hasSuffix("\n") { chomp = "|" } else { chomp = "|-" }
                out += chomp + "\n"
                var body = s
                if body.hasSuffix("\n") { body.removeLast() }
                for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
                    out += line.isEmpty ? "\n" : pad + line + "\n"
                }
            } else {
                out += scalar(s) + "\n"
            }
        case .int(let i): out += "\(i)\n"
        case .bool(let b): out += (b ? "true" : "false") + "\n"
        case .null: out += "null\n"
        }
    }

    /// A multi-line string that a literal block (`|`) reproduces exactly.
    static func literalBlockSafe(_ s: String) -> Bool {
        guard s.contains("\n"), !s.contains("\r"), !s.contains(where: { $0.isControlChar }) else { return false }
        let lines = s.split(separator: "\n", omittingEmptySubsequences: false)
        guard let firstContent = lines.first(where: { !$0.isEmpty }), let c = firstContent.first, c != " ", c != "\t" else { return false }
        return !lines.contains { !$0.isEmpty && $0.allSatisfy { $0 == " " || $0 == "\t" } }
    }

    static let reserved: Set<String> = ["", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n", "<<", "=", ".inf", "-.inf", ".nan"]

    /// A string as a YAML scalar, quoted when a plain scalar would read back as something else.
    static func scalar(_ s: String) -> String {
        if needsQuotes(s) {
            if s.contains(where: { $0.isControlChar || $0 == "\n" }) || s.contains("\\") && s.contains("'") {
                return doubleQuoted(s)
            }
            return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        }
        return s
    }

    static func needsQuotes(_ s: String) -> Bool {
        guard let f = s.first, let l = s.last else { return true }
        if reserved.contains(s.lowercased()) { return true }
        if f == " " || l == " " { return true }
        if "!&*-?{}[],#|>@`\"'%:".contains(f) { return true }
        if s.contains(": ") || s.contains(" #") || l == ":" { return true }
        if s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) { return true }
        // Numbers, YAML 1.1 sexagesimal numbers (22:22) and timestamps all start like a number.
        guard f.isASCII && (f.isNumber || f == "+" || f == "." || f == "-") else { return false }
        if looksNumeric(s) { return true }
        if s.contains(":"), sexagesimal.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil { return true }
        if s.count >= 8, timestamp.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil { return true }
        return false
    }

    static let numeric = try! NSRegularExpression(pattern: #"^[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|[0-9][0-9_]*|[0-9_]*\.[0-9_]*([eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+|\.(inf|Inf|INF|nan|NaN|NAN))$"#)
    static let sexagesimal = try! NSRegularExpression(pattern: #"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$"#)
    static let timestamp = try! NSRegularExpression(pattern: #"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"#)

    static func looksNumeric(_ s: String) -> Bool {
        s != "." && numeric.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
    }

    static func doubleQuoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7f { out += String(format: "\\x%02X", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}

extension Character {
    var isControlChar: Bool { unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" || $0.value == 0x7f } }
}
