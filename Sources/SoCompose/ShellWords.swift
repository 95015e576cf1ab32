import Foundation
import SoBasics

/// Splits a command string the way a POSIX shell would (no expansion): whitespace separates words,
/// single quotes are literal, double quotes allow `\"`, `\\`, `\$` and `` \` ``, a backslash escapes outside quotes.
public enum ShellWords {
    public static func split(_ text: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var it = Array(text)
        var i = 0
        func flush() { if inWord { words.append(current) }; current = ""; inWord = false }
        while i < it.count {
            let c = it[i]
            switch c {
            case " ", "\t", "\n", "\r":
                flush()
            case "'":
                inWord = true
                guard let end = it[(i + 1)...].firstIndex(of: "'") else {
                    throw SoError("unterminated single quote in '\(text)'", hint: "close the quote")
                }
                current += String(it[(i + 1)..<end])
                i = end
            case "\"":
                inWord = true
                var j = i + 1
                var closed = false
                while j < it.count {
                    if it[j] == "\\", j + 1 < it.count, "\"\\$`\n".contains(it[j + 1]) {
                        if it[j + 1] != "\n" { current.append(it[j + 1]) }
                        j += 2
                        continue
                    }
                    if it[j] == "\"" { closed = true; break }
                    current.append(it[j])
                    j += 1
                }
                guard closed else { throw SoError("unterminated double quote in '\(text)'", hint: "close the quote") }
                i = j
            case "\\":
                if i + 1 < it.count {
                    if it[i + 1] != "\n" { current.append(it[i + 1]); inWord = true }
                    i += 1
                } else {
                    current.append("\\"); inWord = true
                }
            default:
                current.append(c)
                inWord = true
            }
            i += 1
        }
        flush()
        it.removeAll()
        return words
    }
}
