/// Character-class checks for names, without regular expressions (no ICU on the start-up path).
public enum NameRules {
    static func isAlnum(_ c: Unicode.Scalar) -> Bool {
        (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x41 && c.value <= 0x5A) || (c.value >= 0x61 && c.value <= 0x7A)
    }

    /// `first` then any of `rest`, at least one character.
    public static func matches(_ s: String, first: (Unicode.Scalar) -> Bool, rest: (Unicode.Scalar) -> Bool) -> Bool {
        var it = s.unicodeScalars.makeIterator()
        guard let f = it.next(), first(f) else { return false }
        while let c = it.next() { if !rest(c) { return false } }
        return true
    }

    /// `[A-Za-z0-9][A-Za-z0-9_.-]*`: pod, job, volume, service and stack names.
    public static func isComponent(_ s: String) -> Bool {
        matches(s, first: isAlnum, rest: { isAlnum($0) || $0 == "_" || $0 == "." || $0 == "-" })
    }

    /// `[A-Za-z_][A-Za-z0-9_.-]*`: environment variable names as compose and dotenv accept them.
    public static func isVariable(_ s: String) -> Bool {
        matches(s, first: { ($0.value >= 0x41 && $0.value <= 0x5A) || ($0.value >= 0x61 && $0.value <= 0x7A) || $0 == "_" },
                rest: { isAlnum($0) || $0 == "_" || $0 == "." || $0 == "-" })
    }

    /// `[A-Z_][A-Z0-9_]*`: upper-case variable names.
    public static func isUpperVariable(_ s: Substring) -> Bool {
        matches(String(s), first: { ($0.value >= 0x41 && $0.value <= 0x5A) || $0 == "_" },
                rest: { ($0.value >= 0x41 && $0.value <= 0x5A) || ($0.value >= 0x30 && $0.value <= 0x39) || $0 == "_" })
    }

    /// A DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63.
    public static func isDNSLabel(_ s: String) -> Bool {
        let lowerAlnum = { (c: Unicode.Scalar) in (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x61 && c.value <= 0x7A) }
        guard s.unicodeScalars.count <= 63, let last = s.unicodeScalars.last, lowerAlnum(last) else { return false }
        return matches(s, first: lowerAlnum, rest: { lowerAlnum($0) || $0 == "-" })
    }

    /// Only characters from `allowed` (and alphanumerics), at least one.
    public static func isPlain(_ s: String, extra: String) -> Bool {
        let set = Set(extra.unicodeScalars)
        return matches(s, first: { isAlnum($0) || set.contains($0) }, rest: { isAlnum($0) || set.contains($0) })
    }
}
