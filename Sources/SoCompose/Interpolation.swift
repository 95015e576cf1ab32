import Foundation
import SoBasics

/// Compose-spec variable interpolation: `$V`, `${V}`, `${V:-d}`, `${V-d}`, `${V:?msg}`, `${V?msg}`,
/// `${V:+alt}`, `${V+alt}`, nested expressions in the default/alternative/message, and `$$` for a
/// literal `$`. A `$` not followed by a name, `{` or `$` stays literal. Names are looked up only
/// through `lookup` (never the process environment). Defaults are evaluated only when used, so
/// `${A:-${B:?}}` does not fail while A is set.
public enum Interpolation {
    public static func interpolate(_ text: String, lookup: (String) -> String?) throws -> String {
        try interpolate(text, lookup: lookup, unset: { _ in })
    }

    /// As above; `unset` hears each name used bare (`$V`, `${V}`) that has no value, which becomes an
    /// empty string (docker compose warns about these; names with a default or `?` are not reported).
    public static func interpolate(_ text: String, lookup: (String) -> String?, unset: (String) -> Void) throws
        -> String
    {
        guard text.contains("$") else { return text }
        return try withoutActuallyEscaping(lookup) { lookup in
            var parser = Parser(text, lookup: lookup)
            let out = try parser.run()
            parser.unset.forEach(unset)
            return out
        }
    }

    /// Names a text refers to (in defaults and alternatives too), in order of first use; `$$` is not a
    /// reference. Malformed text yields the names before the first error.
    public static func variables(in text: String) -> [String] {
        var parser = Parser(text, lookup: { _ in nil })
        parser.evaluating = false
        _ = try? parser.run()
        return parser.referenced
    }

    /// A recursive-descent reader over unicode scalars (so a combining mark after `$` or `}` cannot
    /// glue them into another character).
    struct Parser {
        let chars: [Unicode.Scalar]
        let lookup: (String) -> String?
        /// False while reading a default that is not used (and for `variables(in:)`): syntax is still
        /// checked, but nothing is looked up and `:?` does not fail.
        var evaluating = true
        var referenced: [String] = []
        /// Bare references without a value, in order of first use.
        var unset: [String] = []
        var i = 0

        init(_ text: String, lookup: @escaping (String) -> String?) {
            self.chars = Array(text.unicodeScalars)
            self.lookup = lookup
        }

        static func isNameStart(_ c: Unicode.Scalar) -> Bool {
            c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c)
        }
        static func isName(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || ("0"..."9").contains(c) }

        mutating func run() throws -> String { try word(closingFrom: nil) }

        /// Text up to the end or, inside an expression that began at `start`, up to and including its `}`.
        mutating func word(closingFrom start: Int?) throws -> String {
            var out = String.UnicodeScalarView()
            while i < chars.count {
                let c = chars[i]
                if start != nil, c == "}" {
                    i += 1
                    return String(out)
                }
                guard c == "$", i + 1 < chars.count else {
                    out.append(c)
                    i += 1
                    continue
                }
                let next = chars[i + 1]
                if next == "$" {
                    out.append("$")
                    i += 2
                } else if next == "{" {
                    i += 2
                    out.append(contentsOf: try braced().unicodeScalars)
                } else if Self.isNameStart(next) {
                    i += 1
                    out.append(contentsOf: bare(name()).unicodeScalars)
                } else {
                    out.append(c)
                    i += 1
                }
            }
            if let start {
                throw failure("unterminated \(excerpt(from: start))", hint: "close the expression with '}'")
            }
            return String(out)
        }

        mutating func name() -> String {
            let start = i
            while i < chars.count, Self.isName(chars[i]) { i += 1 }
            var s = String.UnicodeScalarView()
            s.append(contentsOf: chars[start..<i])
            return String(s)
        }

        mutating func value(of name: String) -> String? {
            if !referenced.contains(name) { referenced.append(name) }
            return evaluating ? lookup(name) : nil
        }

        /// `$V` or `${V}`: the value, or an empty string (noted in `unset`).
        mutating func bare(_ name: String) -> String {
            if let v = value(of: name) { return v }
            if evaluating && !unset.contains(name) { unset.append(name) }
            return ""
        }

        /// After `${`: a name, then `}` or an operator and a nested word up to the closing `}`.
        mutating func braced() throws -> String {
            let start = i - 2
            guard i < chars.count, Self.isNameStart(chars[i]) else {
                throw failure(
                    "invalid interpolation \(excerpt(from: start)): '${' must be followed by a variable name",
                    hint: "write ${NAME}, ${NAME:-default}, or $$ for a literal $")
            }
            let name = name()
            guard i < chars.count else {
                throw failure("unterminated \(excerpt(from: start))", hint: "close the expression with '}'")
            }
            if chars[i] == "}" {
                i += 1
                return bare(name)
            }
            let op = try operation(name: name, start: start)
            let current = value(of: name)
            let isSet = current != nil
            let nonEmpty = !(current ?? "").isEmpty
            let useWord: Bool
            switch op {
            case ":-": useWord = !nonEmpty
            case "-": useWord = !isSet
            case ":+": useWord = nonEmpty
            case "+": useWord = isSet
            default: useWord = evaluating && !(op == ":?" ? nonEmpty : isSet)  // "?" forms: the word is the message
            }
            guard useWord else {
                try skip(closingFrom: start)
                return op.hasSuffix("+") ? "" : current ?? ""
            }
            let word = try word(closingFrom: start)
            guard op.hasSuffix("?") else { return word }
            throw failure(
                "required variable \(name) is missing" + (word.isEmpty ? " a value" : ": \(word)"),
                hint: "give \(name) a value, or write ${\(name):-default} in the compose file")
        }

        /// One of `:-`, `-`, `:?`, `?`, `:+`, `+` after a name.
        mutating func operation(name: String, start: Int) throws -> String {
            var op = String(Character(chars[i]))
            i += 1
            if op == ":", i < chars.count, "-?+".unicodeScalars.contains(chars[i]) {
                op += String(Character(chars[i]))
                i += 1
            }
            guard ["-", "?", "+", ":-", ":?", ":+"].contains(op) else {
                throw failure(
                    "invalid interpolation \(excerpt(from: start)) for variable \(name)",
                    hint: "after the name write '}', ':-', '-', ':?', '?', ':+' or '+'")
            }
            return op
        }

        /// Reads an unused default/alternative for syntax only.
        mutating func skip(closingFrom start: Int) throws {
            let saved = evaluating
            evaluating = false
            defer { evaluating = saved }
            _ = try word(closingFrom: start)
        }

        /// The text from `from`, at most 40 characters, quoted, for messages.
        func excerpt(from: Int) -> String {
            var s = String.UnicodeScalarView()
            s.append(contentsOf: chars[from..<min(chars.count, from + 40)])
            let more = from + 40 < chars.count
            return "'\(String(s))\(more ? "…" : "")'".replacingOccurrences(of: "\n", with: "\\n")
        }

        func failure(_ message: String, hint: String) -> SoError { SoError(message, hint: hint) }
    }
}
