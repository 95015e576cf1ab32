import Foundation
import SoBasics

/// Splits a command string the way a POSIX shell would, without any expansion: blanks and newlines
/// separate words, single quotes are literal, double quotes honour `\"`, `\\`, `\$`, `` \` `` and
/// backslash-newline, a backslash outside quotes escapes the next character (backslash-newline joins
/// lines). Works on unicode scalars so a combining mark cannot hide a quote.
public enum ShellWords {
    public static func split(_ text: String) throws -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        var inWord = false
        var it = text.unicodeScalars.makeIterator()
        while let c = it.next() {
            switch c {
            case " ", "\t", "\n", "\r":
                if inWord { words.append(String(current)) }
                current = String.UnicodeScalarView()
                inWord = false
            case "'":
                inWord = true
                try readSingleQuoted(&it, into: &current, text: text)
            case "\"":
                inWord = true
                try readDoubleQuoted(&it, into: &current, text: text)
            case "\\":
                guard let next = it.next() else {
                    current.append("\\")
                    inWord = true
                    continue
                }
                if next != "\n" {
                    current.append(next)
                    inWord = true
                }
            default:
                current.append(c)
                inWord = true
            }
        }
        if inWord { words.append(String(current)) }
        return words
    }

    /// Quotes `word` so that `split` (and a POSIX shell) reads it back as one word (`CommandText.quote`).
    public static func quote(_ word: String) -> String { CommandText.quote(word) }

    /// Joins words into one command line that `split` turns back into the same words.
    public static func join(_ words: [String]) -> String { words.map(quote).joined(separator: " ") }

    private static func readSingleQuoted(
        _ it: inout String.UnicodeScalarView.Iterator, into out: inout String.UnicodeScalarView, text: String
    ) throws {
        while let c = it.next() {
            if c == "'" { return }
            out.append(c)
        }
        throw unterminated("single", text)
    }

    private static func readDoubleQuoted(
        _ it: inout String.UnicodeScalarView.Iterator, into out: inout String.UnicodeScalarView, text: String
    ) throws {
        while let c = it.next() {
            if c == "\"" { return }
            guard c == "\\" else {
                out.append(c)
                continue
            }
            guard let next = it.next() else { break }
            switch next {
            case "\"", "\\", "$", "`": out.append(next)
            case "\n": break
            default:
                out.append("\\")
                out.append(next)
            }
        }
        throw unterminated("double", text)
    }

    private static func unterminated(_ kind: String, _ text: String) -> SoError {
        let shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return SoError(
            "unterminated \(kind) quote in '\(shown)'", hint: "close the \(kind) quote, or escape it with a backslash")
    }
}
