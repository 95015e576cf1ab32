import Foundation
import SoBasics

/// A relative bind whose source does not exist (docker creates it as an empty directory): `deploy create`
/// makes `data/<volume>` in the deployment directory instead, mounted read-write from the host.
public enum BindDirectory {
    /// `./foundry/workspace` → `host-path-foundry-workspace`.
    public static func volume(for source: String) -> String {
        var s = Substring(source)
        while s.hasPrefix("./") || s.hasPrefix("../") { s = s.drop { $0 == "." }.dropFirst() }
        var out = ""
        for c in s.lowercased() {
            if c.isASCII && (c.isLetter || c.isNumber) {
                out.append(c)
            } else if !out.hasSuffix("-") && !out.isEmpty {
                out.append("-")
            }
        }
        while out.hasSuffix("-") { out.removeLast() }
        var name = "host-path-" + (out.isEmpty ? "dir" : out)
        if name.count > 63 {
            name = String(name.prefix(63))
            while name.hasSuffix("-") { name.removeLast() }
        }
        return name
    }

    /// Where it lives, relative to the deployment directory.
    public static func path(for source: String) -> String { "data/" + volume(for: source) }
}
