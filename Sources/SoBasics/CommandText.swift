import Foundation

/// Command lines as messages show them.
public enum CommandText {
    /// Quotes `word` so that a POSIX shell (and `ShellWords.split`) reads it back as one word.
    public static func quote(_ word: String) -> String {
        let safe =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                        || "_-./:@%+=,".unicodeScalars.contains($0))
            }
        if safe { return word }
        var out = String.UnicodeScalarView()
        out.append("'")
        for c in word.unicodeScalars {
            if c == "'" { out.append(contentsOf: "'\\''".unicodeScalars) } else { out.append(c) }
        }
        out.append("'")
        return String(out)
    }

    /// `argv` as one line to run by hand in a hint: each word quoted, a script (a word of several lines, or a long
    /// one) shown as '…', so that an error stays one line.
    public static func brief(_ argv: [String]) -> String {
        argv.map { $0.contains("\n") || $0.count > 80 ? "'…'" : quote($0) }.joined(separator: " ")
    }
}
