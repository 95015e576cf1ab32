import Foundation

/// A double-quoted string that both JSON and YAML read back exactly (`\uXXXX` for control characters).
public enum DoubleQuoted {
    /// `escaping` names the characters written as `\uXXXX` (by default the control characters).
    public static func string(_ s: String, escaping: (Unicode.Scalar) -> Bool = { $0.value < 0x20 || $0.value == 0x7f })
        -> String
    {
        string(
            s,
            escape: { u in
                guard escaping(u) else { return nil }
                let hex = String(u.value, radix: 16)
                return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            })
    }

    /// `s` in double quotes with `\"`, `\\`, `\n`, `\r` and `\t` escaped, and any other character as `escape`
    /// writes it (nil: as it is). JSON, YAML and `.env` files share these escapes.
    public static func string(_ s: String, escape: (Unicode.Scalar) -> String?) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if let escaped = escape(u) { out += escaped } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}
