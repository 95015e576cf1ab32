import Foundation

/// Percent-encoding for a URL's path segment or query value.
public enum PercentEncoding {
    /// `s` with every byte but the unreserved ones (ASCII letters, digits, `-._~`) percent-encoded: safe in a path
    /// segment and in a query value (a `+` read as a space, an `&` as the next field, is not), and every byte of a
    /// character outside ASCII encoded.
    public static func component(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            let unreserved =
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || [0x2D, 0x2E, 0x5F, 0x7E].contains(byte)
            out += unreserved ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }
        return out
    }
}
