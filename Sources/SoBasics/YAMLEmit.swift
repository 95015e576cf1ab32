import Foundation

enum YAMLEmit {
    static func emit(_ v: YValue, indent: Int, into out: inout String, atLineStart: Bool) {
        let pad = String(repeating: " ", count: indent)
        switch v {
        case .map(let pairs):
            if pairs.isEmpty {
                out += "{}\n"
                return
            }
            var first = true
            for (k, value) in pairs {
                if !(first && !atLineStart) { out += pad }
                first = false
                let key = scalar(k)
                // libyaml reads an implicit key of at most 1024 characters: longer keys are explicit (`? key`).
                if key.unicodeScalars.count > 1000 { out += "? " + key + "\n" + pad + ":" } else { out += key + ":" }
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
            if items.isEmpty {
                out += "[]\n"
                return
            }
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
                if s.hasSuffix("\n\n") || s == "\n" {
                    chomp = "|+"
                } else if s.hasSuffix("\n") {
                    chomp = "|"
                } else {
                    chomp = "|-"
                }
                out += chomp + "\n"
                var body = s
                if body.hasSuffix("\n") { body.removeLast() }
                // A top-level block scalar still needs an indentation of at least one space.
                let bodyPad = indent == 0 ? "  " : pad
                for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
                    out += line.isEmpty ? "\n" : bodyPad + line + "\n"
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
        let u = s.unicodeScalars
        guard u.contains("\n"), !u.contains(where: { $0 != "\n" && $0 != "\t" && mustEscape($0) }) else { return false }
        let lines = u.split(separator: "\n", omittingEmptySubsequences: false)
        guard let firstContent = lines.first(where: { !$0.isEmpty }), let c = firstContent.first, c != " ", c != "\t"
        else { return false }
        return !lines.contains { !$0.isEmpty && $0.allSatisfy { $0 == " " || $0 == "\t" } }
    }

    /// Characters a YAML file may not hold raw, or that a reader takes for a line break or a byte order
    /// mark: C0 controls, DEL, C1 controls (NEL included), U+2028/U+2029, U+FEFF, U+FFFE/U+FFFF.
    static func mustEscape(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x0A, 0x09: return false
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF: return true
        default: return false
        }
    }

    static let reserved: Set<String> = [
        "", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n", "<<", "=", ".inf", "-.inf", ".nan",
    ]

    /// A string as a YAML scalar, quoted when a plain scalar would read back as something else.
    static func scalar(_ s: String) -> String {
        if needsQuotes(s) {
            let u = s.unicodeScalars
            if u.contains(where: { $0 == "\n" || mustEscape($0) }) || u.contains("\\") && u.contains("'") {
                return doubleQuoted(s)
            }
            var quoted = "'"
            for c in u {
                quoted.unicodeScalars.append(c)
                if c == "'" { quoted.unicodeScalars.append(c) }
            }
            return quoted + "'"
        }
        return s
    }

    static func needsQuotes(_ s: String) -> Bool {
        // Judged on Unicode scalars, as a YAML reader sees them: a combining mark after a space or `#`
        // forms one Character with it, but `: ` and ` #` still mean what they mean.
        let u = s.unicodeScalars
        guard let f = u.first, let l = u.last else { return true }
        if s.utf8.count <= 5 && reserved.contains(s.lowercased()) { return true }
        if f == " " || l == " " || f == "\t" || l == "\t" || l == ":" { return true }
        switch f {
        case "!", "&", "*", "-", "?", "{", "}", "[", "]", ",", "#", "|", ">", "@", "`", "\"", "'", "%", ":": return true
        case ".": if u.starts(with: "...".unicodeScalars) { return true }
        default: break
        }
        var previous: Unicode.Scalar = "x"
        for c in u {
            if c.value < 0x20 || mustEscape(c) { return true }
            if (previous == ":" && (c == " " || c == "\t")) || ((previous == " " || previous == "\t") && c == "#") {
                return true
            }
            previous = c
        }
        // Numbers, YAML 1.1 sexagesimal numbers (22:22) and timestamps all start like a number.
        guard f.isASCII && (("0"..."9").contains(f) || f == "+" || f == "." || f == "-") else { return false }
        return looksNumeric(s) || isSexagesimal(s) || isTimestamp(s)
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    /// What a YAML 1.1 reader takes for a number: ints (binary, octal, hex, `_`), floats, exponents, .inf/.nan.
    static func looksNumeric(_ s: String) -> Bool {
        var b = Array(s.utf8)
        if let f = b.first, f == UInt8(ascii: "+") || f == UInt8(ascii: "-") { b.removeFirst() }
        guard !b.isEmpty, b != [UInt8(ascii: ".")] else { return false }
        let text = String(decoding: b, as: UTF8.self)
        if [".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"].contains(text) { return true }
        let lower = text.lowercased()
        func all(_ from: Int, _ ok: (UInt8) -> Bool) -> Bool {
            b.count > from && b[from...].allSatisfy { ok($0) || $0 == UInt8(ascii: "_") }
        }
        if lower.hasPrefix("0b") { return all(2) { $0 == 48 || $0 == 49 } }
        if lower.hasPrefix("0x") { return all(2) { isDigit($0) || (97...102).contains($0 | 0x20) } }
        if lower.hasPrefix("0o") { return all(2) { (48...55).contains($0) } }
        // Decimal: digits, at most one '.', optional exponent.
        var i = 0
        var digits = 0
        var dots = 0
        while i < b.count, isDigit(b[i]) || b[i] == UInt8(ascii: "_") || b[i] == UInt8(ascii: ".") {
            if b[i] == UInt8(ascii: ".") { dots += 1 } else if isDigit(b[i]) { digits += 1 }
            i += 1
        }
        guard dots <= 1, digits > 0 || dots == 1 else { return false }
        if i == b.count { return true }
        guard b[i] | 0x20 == UInt8(ascii: "e") else { return false }
        i += 1
        if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
        return i < b.count && b[i...].allSatisfy(isDigit)
    }

    /// YAML 1.1 base-60 numbers such as `22:22` or `1:30:00`.
    static func isSexagesimal(_ s: String) -> Bool {
        var b = Array(s.utf8)
        if let f = b.first, f == UInt8(ascii: "+") || f == UInt8(ascii: "-") { b.removeFirst() }
        guard b.contains(UInt8(ascii: ":")), let f = b.first, isDigit(f) else { return false }
        var parts = String(decoding: b, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        let head = parts.removeFirst()
        guard head.utf8.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: "_") }) else { return false }
        for (n, p) in parts.enumerated() {
            var digits = Substring(p)
            if n == parts.count - 1, let dot = p.firstIndex(of: ".") {
                guard p[p.index(after: dot)...].utf8.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: "_") }) else {
                    return false
                }
                digits = p[..<dot]
            }
            guard (1...2).contains(digits.count), digits.utf8.allSatisfy(isDigit), let v = Int(digits), v <= 59 else {
                return false
            }
        }
        return true
    }

    /// Dates (`2024-01-02…`) that a YAML 1.1 reader turns into timestamps.
    static func isTimestamp(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count >= 8, b[0...3].allSatisfy(isDigit), b[4] == UInt8(ascii: "-") else { return false }
        var i = 5
        var month = 0
        while i < b.count, isDigit(b[i]) {
            i += 1
            month += 1
        }
        guard (1...2).contains(month), i < b.count, b[i] == UInt8(ascii: "-") else { return false }
        i += 1
        var day = 0
        while i < b.count, isDigit(b[i]) {
            i += 1
            day += 1
        }
        return (1...2).contains(day)
    }

    /// A double-quoted YAML scalar: JSON's escapes, plus `\uXXXX` for every character `mustEscape` names.
    static func doubleQuoted(_ s: String) -> String { DoubleQuoted.string(s, escaping: mustEscape) }
}
