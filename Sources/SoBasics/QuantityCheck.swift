import Foundation

/// CPU and memory amounts checked where they are read, so a typo is an error naming its file:line
/// instead of a silent fall back to the defaults at render.
public enum QuantityCheck {
    /// A CPU amount (`0.5`, `2`, `250m`); nil when absent or empty (the default applies).
    public static func cpu(_ m: MapReader, _ key: String, what: String, of owner: String? = nil) throws -> String? {
        try check(
            m, key, what: what, of: owner, isNot: "a CPU quantity",
            hint: "write a number of CPUs such as 0.5, 2 or 250m"
        ) {
            Quantity.cpu($0) != nil || Double($0.trimmedSpaces) == 0
        }
    }

    /// A memory size (`512Mi`, `1Gi`, or docker's `512m`, `512M`, `2g`); nil when absent or empty.
    public static func memory(_ m: MapReader, _ key: String, what: String, of owner: String? = nil) throws -> String? {
        try check(
            m, key, what: what, of: owner, isNot: "a memory size",
            hint: "write e.g. 512Mi, 1Gi, 512M or 2g (M and G mean MiB and GiB, as in docker)"
        ) {
            Quantity.bytes($0, binaryLetters: true) != nil
        }
    }

    /// A storage size (`10Gi`, `500Mi`, `10G`); nil when absent or empty.
    public static func storage(_ m: MapReader, _ key: String, what: String, of owner: String? = nil) throws -> String? {
        try check(m, key, what: what, of: owner, isNot: "a size", hint: "write e.g. 10Gi, 500Mi or 10G") {
            Quantity.bytes($0, binaryLetters: false) != nil
        }
    }

    /// The text of `key` when `valid` accepts it; nil when absent or empty; an error naming `isNot` otherwise.
    static func check(
        _ m: MapReader, _ key: String, what: String, of owner: String?, isNot: String, hint: String,
        valid: (String) -> Bool
    ) throws -> String? {
        guard let node = m.nonNull(key) else { return nil }
        let text = try node.string("'\(key)'")
        guard !text.trimmedSpaces.isEmpty else { return nil }
        guard valid(text) else {
            throw node.error("\(what) '\(text)'\(owner.map { " of \($0)" } ?? "") is not \(isNot)", hint: hint)
        }
        return text
    }
}
