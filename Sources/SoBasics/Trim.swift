/// Trimming without Foundation's CharacterSet (which loads ICU property tables on first use).
extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    public var trimmedSpaces: String { trimmed { $0 == " " || $0 == "\t" } }
    /// Without leading and trailing spaces, tabs, CR and LF.
    public var trimmedWhitespace: String { trimmed { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" } }
    /// Without leading and trailing CR and LF.
    public var trimmedNewlines: String { trimmed { $0 == "\n" || $0 == "\r" } }
    /// The items of a comma list, trimmed of spaces and tabs, empty ones left out (`a, b,,c` → `a`, `b`, `c`).
    public var commaSeparatedItems: [String] { split(separator: ",").map(\.trimmedSpaces).filter { !$0.isEmpty } }

    func trimmed(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }), let last = scalars.lastIndex(where: { !drop($0) })
        else { return "" }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars[first...last])
        return String(out)
    }
}
