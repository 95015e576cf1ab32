import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// laconic-so's sidecar rewrite, narrowed: a sibling service name becomes `localhost` only where it is a
/// host — the whole value, `name:PORT`, `@name`, `//name` — never inside paths, words or prose.
public enum SiblingRewrite {
    public static func apply(_ value: String, siblings: [String]) -> String {
        var out = value
        for name in siblings.sorted(by: { $0.count > $1.count }) where out.contains(name) {
            if out == name { return "localhost" }
            let n = NSRegularExpression.escapedPattern(for: name)
            let patterns = [#"(?<=@|//)"# + n + #"(?=[:/?#]|$)"#, #"(?<![A-Za-z0-9_./@-])"# + n + #"(?=:[0-9])"#]
            for p in patterns {
                out = out.replacingOccurrences(of: p, with: "localhost", options: .regularExpression)
            }
        }
        return out
    }
}
