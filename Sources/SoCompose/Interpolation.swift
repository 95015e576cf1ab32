import Foundation
import SoBasics

/// Compose-spec variable interpolation: `$V`, `${V}`, `${V:-d}`, `${V-d}`, `${V:?msg}`, `${V?msg}`,
/// `${V:+alt}`, `${V+alt}`, nested expressions in the default/alternative, and `$$` for a literal `$`.
/// Names are looked up only through `lookup` (never the process environment).
public enum Interpolation {
    public struct Failure: Error, Equatable {
        public var message: String
    }

    public static func interpolate(_ text: String, lookup: (String) -> String?) throws -> String {
        do {
            return try withoutActuallyEscaping(lookup) { lookup in
                var p = Parser(chars: Array(text), lookup: lookup)
                return try p.parse(until: nil)
            }
        } catch let f as Failure {
            throw SoError(f.message, hint: hint(for: f.message))
        }
    }

    static func hint(for message: String) -> String {
        if message.hasPrefix("required variable") { return "set it in the spec's config: section (or config.env)" }
        return "write ${NAME}, ${NAME:-default} or $$ for a literal $"
    }

    /// Names a text refers to, in order of first use.
    public static func variables(in text: String) -> [String] {
        final class Names { var list: [String] = [] }
        let names = Names()
        var p = Parser(chars: Array(text), lookup: { name in
            if !names.list.contains(name) { names.list.append(name) }
            return nil
        }, collecting: true)
        _ = try? p.parse(until: nil)
        return names.list
    }

    struct Parser {
        let chars: [Character]
        let lookup: (String) -> String?
        var collecting = false
        var i = 0

        init(chars: [Character], lookup: @escaping (String) -> String?, collecting: Bool = false) {
            self.chars = chars
            self.lookup = lookup
            self.collecting = collecting
        }

        static func isNameStart(_ c: Character) -> Bool { c == "_" || (c.isASCII && c.isLetter) }
        static func isName(_ c: Character) -> Bool { isNameStart(c) || (c.isASCII && c.isNumber) }

        /// Reads text up to an unmatched `}` (when `until` is "}") or the end.
        mutating func parse(until terminator: Character?) throws -> String {
            var out = ""
            while i < chars.count {
                let c = chars[i]
                if let terminator, c == terminator { return out }
                if c != "$" { out.append(c); i += 1; continue }
                // c == "$"
                guard i + 1 < chars.count else { out.append("$"); i += 1; continue }
                let n = chars[i + 1]
                if n == "$" { out.append("$"); i += 2; continue }
                if n == "{" { i += 2; out += try braced(); continue }
                if Self.isNameStart(n) {
                    var j = i + 1
                    while j < chars.count, Self.isName(chars[j]) { j += 1 }
                    let name = String(chars[(i + 1)..<j])
                    out += lookup(name) ?? ""
                    i = j
                    continue
                }
                out.append("$"); i += 1
            }
            if terminator != nil { throw Failure(message: "unterminated ${ in '\(String(chars))'") }
            return out
        }

        /// After `${`: NAME then `}` or an operator and a nested word.
        mutating func braced() throws -> String {
            let start = i
            while i < chars.count, Self.isName(chars[i]) { i += 1 }
            let name = String(chars[start..<i])
            guard !name.isEmpty, Self.isNameStart(name.first!) else {
                throw Failure(message: "invalid interpolation: '${\(String(chars[start..<min(chars.count, start + 20)]))' needs a variable name")
            }
            guard i < chars.count else { throw Failure(message: "unterminated ${\(name) in '\(String(chars))'") }
            if chars[i] == "}" { i += 1; return lookup(name) ?? "" }
            var op = String(chars[i])
            i += 1
            if op == ":" {
                guard i < chars.count, "-?+".contains(chars[i]) else {
                    throw Failure(message: "invalid interpolation in ${\(name):…}: expected :-, :?, or :+")
                }
                op += String(chars[i])
                i += 1
            } else if !"-?+".contains(op) {
                throw Failure(message: "invalid interpolation: unexpected '\(op)' after ${\(name)")
            }
            let value = lookup(name)
            let word = try parse(until: "}")
            i += 1 // the closing brace
            let set = value != nil
            let nonEmpty = !(value ?? "").isEmpty
            switch op {
            case ":-": return nonEmpty ? value! : word
            case "-": return set ? value! : word
            case ":+": return nonEmpty ? word : ""
            case "+": return set ? word : ""
            case ":?", "?":
                let ok = op == ":?" ? nonEmpty : set
                if ok || collecting { return value ?? "" }
                throw Failure(message: "required variable \(name) is missing" + (word.isEmpty ? "" : ": \(word)"))
            default: return ""
            }
        }
    }
}
