import Foundation
import SoBasics

/// Reads dotenv entries over unicode scalars (CRLF line ends read as LF), tracking line numbers.
struct DotEnvReader {
    let chars: [Unicode.Scalar]
    let file: String
    var i = 0
    var line = 1

    init(_ text: String, file: String) {
        var scalars: [Unicode.Scalar] = []
        for c in text.unicodeScalars {
            if c == "\n", scalars.last == "\r" { scalars.removeLast() }
            scalars.append(c)
        }
        chars = scalars
        self.file = file
    }

    var atEnd: Bool { i >= chars.count }
    var peek: Unicode.Scalar? { atEnd ? nil : chars[i] }

    mutating func advance() -> Unicode.Scalar {
        let c = chars[i]
        i += 1
        if c == "\n" { line += 1 }
        return c
    }

    mutating func skipBlanks() { while let c = peek, c == " " || c == "\t" { i += 1 } }
    mutating func skipToLineEnd() { while let c = peek, c != "\n" { i += 1 } }

    func error(_ message: String, hint: String, line: Int) -> SoError {
        SoError(message, hint: hint, at: SourceLocation(file: file, line: line))
    }

    /// The next entry, or nil at the end of the text.
    mutating func next() throws -> (String, String)? {
        while true {
            skipBlanks()
            guard let c = peek else { return nil }
            if c == "\n" {
                _ = advance()
                continue
            }
            if c == "#" {
                skipToLineEnd()
                continue
            }
            break
        }
        let startLine = line
        let key = try readKey()
        skipBlanks()
        let value: String
        switch peek {
        case "'": value = try readSingleQuoted(key: key, startLine: startLine)
        case "\"": value = try readDoubleQuoted(key: key, startLine: startLine)
        default: return (key, readUnquoted())
        }
        try finishLine(key: key)
        return (key, value)
    }

    /// `KEY=` or `export KEY=`, consuming the `=`.
    mutating func readKey() throws -> String {
        let start = i
        while let c = peek, c != "=", c != "\n" { i += 1 }
        var key = String(String.UnicodeScalarView(chars[start..<i])).trimmedSpaces
        guard peek == "=" else {
            throw error(
                "line without '=': '\(key.prefix(40))'", hint: "write KEY=VALUE (a line starting with # is a comment)",
                line: line)
        }
        i += 1
        if key.hasPrefix("export"), let blank = key.unicodeScalars.dropFirst(6).first, blank == " " || blank == "\t" {
            key = String(key.dropFirst(6)).trimmedSpaces
        }
        guard NameRules.isVariable(key) else {
            throw error(
                "invalid variable name '\(key.prefix(40))'",
                hint: "use letters, digits and '_', not starting with a digit", line: line)
        }
        return key
    }

    /// To the line end; a `#` after a blank starts a comment; surrounding blanks are trimmed.
    mutating func readUnquoted() -> String {
        let start = i
        while let c = peek, c != "\n" {
            if c == "#", i > start, chars[i - 1] == " " || chars[i - 1] == "\t" { break }
            i += 1
        }
        let value = String(String.UnicodeScalarView(chars[start..<i])).trimmedSpaces
        skipToLineEnd()
        return value
    }

    mutating func readSingleQuoted(key: String, startLine: Int) throws -> String {
        i += 1
        var out = String.UnicodeScalarView()
        while !atEnd {
            let c = advance()
            if c == "'" { return String(out) }
            out.append(c)
        }
        throw error("unterminated single quote in the value of \(key)", hint: "close the quote with '", line: startLine)
    }

    mutating func readDoubleQuoted(key: String, startLine: Int) throws -> String {
        i += 1
        var out = String.UnicodeScalarView()
        while !atEnd {
            let c = advance()
            if c == "\"" { return String(out) }
            guard c == "\\", !atEnd else {
                out.append(c)
                continue
            }
            let e = advance()
            switch e {
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "\\", "\"", "$", "'": out.append(e)
            default:
                out.append("\\")
                out.append(e)
            }
        }
        throw error(
            "unterminated double quote in the value of \(key)", hint: "close the quote with \"", line: startLine)
    }

    /// After a closing quote only blanks and a comment may follow on the line.
    mutating func finishLine(key: String) throws {
        skipBlanks()
        guard let c = peek, c != "\n" else { return }
        guard c == "#" else {
            throw error(
                "unexpected text after the quoted value of \(key)",
                hint: "put one KEY=VALUE per line; quote the whole value", line: line)
        }
        skipToLineEnd()
    }
}
