import Foundation
import SoBasics

/// `.env` files (compose `env_file`, `--config-file`, a deployment's `config.env`): `KEY=VALUE` lines,
/// `export KEY=VALUE`, comments (`#` at line start, ` #` after an unquoted value), single quotes
/// (literal, may span lines), double quotes (escapes `\n \t \r \\ \" \$`, may span lines), unquoted
/// values trimmed. No interpolation: callers never want the host environment.
public enum DotEnv {
    /// Entries in file order; a repeated key keeps its first position and its last value.
    public static func parse(_ text: String, file: String) throws -> [(key: String, value: String)] {
        var reader = DotEnvReader(text, file: file)
        var out: [(key: String, value: String)] = []
        var index: [String: Int] = [:]
        while let (key, value) = try reader.next() {
            if let at = index[key] {
                out[at].value = value
            } else {
                index[key] = out.count
                out.append((key, value))
            }
        }
        return out
    }

    /// One entry (a line, or a quoted value spanning lines) that `parse` reads back to exactly `value`:
    /// bare when plain, single-quoted when that is enough, double-quoted with escapes otherwise.
    public static func encode(key: String, value: String) -> String {
        if value.unicodeScalars.allSatisfy(isPlain) { return "\(key)=\(value)" }
        if !value.unicodeScalars.contains(where: { $0 == "'" || $0 == "\n" || $0 == "\r" }) {
            return "\(key)='\(value)'"
        }
        return "\(key)=" + DoubleQuoted.string(value, escape: { $0 == "$" ? "\\$" : nil })
    }

    static func isPlain(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)
            || "_-./:@+,%=".unicodeScalars.contains(c)
    }
}
