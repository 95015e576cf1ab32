import Foundation
import SoBasics

/// `.env` files (compose `env_file`, `--config-file`, a deployment's `config.env`): `KEY=VALUE` lines,
/// `export KEY=VALUE`, comments, single quotes (literal, may span lines), double quotes (escapes
/// `\n \t \r \\ \" \$`, may span lines). No interpolation: callers never want the host environment.
public enum DotEnv {
    public static func parse(_ text: String, file: String) throws -> [(key: String, value: String)] {
        var out: [(key: String, value: String)] = []
        let chars = Array(text.replacingOccurrences(of: "\r\n", with: "\n"))
        var i = 0
        var line = 1
        func error(_ message: String, _ hint: String, at l: Int) -> SoError { SoError(message, hint: hint, at: SourceLocation(file: file, line: l)) }
        while i < chars.count {
            // Skip blank space and comment lines.
            while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 }
            if i >= chars.count { break }
            if chars[i] == "\n" { i += 1; line += 1; continue }
            if chars[i] == "#" {
                while i < chars.count, chars[i] != "\n" { i += 1 }
                continue
            }
            let startLine = line
            var keyStart = i
            if chars.count - i > 7, String(chars[i..<(i + 7)]) == "export ", chars[(i + 7)...].contains("=") { i += 7; keyStart = i }
            while i < chars.count, chars[i] != "=", chars[i] != "\n" { i += 1 }
            let key = String(chars[keyStart..<i]).trimmingCharacters(in: .whitespaces)
            guard i < chars.count, chars[i] == "=" else {
                throw error("line without '=': '\(key.prefix(40))'", "write KEY=VALUE", at: startLine)
            }
            guard key.range(of: #"^[A-Za-z_][A-Za-z0-9_.-]*$"#, options: .regularExpression) != nil else {
                throw error("invalid variable name '\(key.prefix(40))'", "use letters, digits and '_', not starting with a digit", at: startLine)
            }
            i += 1
            while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 }
            var value = ""
            if i < chars.count, chars[i] == "'" {
                i += 1
                guard let end = chars[i...].firstIndex(of: "'") else { throw error("unterminated single quote in value of \(key)", "close the quote", at: startLine) }
                value = String(chars[i..<end])
                line += value.filter { $0 == "\n" }.count
                i = end + 1
            } else if i < chars.count, chars[i] == "\"" {
                i += 1
                var closed = false
                while i < chars.count {
                    let c = chars[i]
                    if c == "\\", i + 1 < chars.count {
                        switch chars[i + 1] {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "r": value.append("\r")
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "$": value.append("$")
                        case "'": value.append("'")
                        default: value.append("\\"); value.append(chars[i + 1])
                        }
                        i += 2
                        continue
                    }
                    if c == "\"" { closed = true; i += 1; break }
                    if c == "\n" { line += 1 }
                    value.append(c)
                    i += 1
                }
                guard closed else { throw error("unterminated double quote in value of \(key)", "close the quote", at: startLine) }
            } else {
                let start = i
                while i < chars.count, chars[i] != "\n" {
                    if chars[i] == "#", i > start, chars[i - 1] == " " || chars[i - 1] == "\t" { break }
                    i += 1
                }
                value = String(chars[start..<i]).trimmingCharacters(in: .whitespaces)
            }
            // Rest of the line: only a comment may follow.
            while i < chars.count, chars[i] != "\n" {
                if chars[i] == "#" { while i < chars.count, chars[i] != "\n" { i += 1 }; break }
                if chars[i] != " " && chars[i] != "\t" { throw error("unexpected text after the quoted value of \(key)", "put one KEY=VALUE per line", at: line) }
                i += 1
            }
            if let idx = out.firstIndex(where: { $0.key == key }) { out[idx].value = value } else { out.append((key, value)) }
        }
        return out
    }

    /// One entry that `parse` reads back to exactly `value`.
    public static func encode(key: String, value: String) -> String {
        let plain = value.unicodeScalars.allSatisfy { c in
            (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x41 && c.value <= 0x5A) || (c.value >= 0x61 && c.value <= 0x7A) || "_-./:@+,%=".unicodeScalars.contains(c)
        }
        if plain { return "\(key)=\(value)" }
        if !value.unicodeScalars.contains(where: { $0 == "'" || $0 == "\n" || $0 == "\r" }) { return "\(key)='\(value)'" }
        var out = "\(key)=\""
        for c in value.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "$": out += "\\$"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
