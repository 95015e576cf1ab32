import Foundation
import SoBasics
import SoCompose

/// Directory names as stack and pod names: lowercase letters, digits and '-'.
enum KubeNameish {
    static func label(_ s: String) -> String {
        var out = ""
        for c in s.lowercased() { out.append(c.isLetter && c.isASCII || c.isNumber ? c : "-") }
        while out.contains("--") { out = out.replacingOccurrences(of: "--", with: "-") }
        return String(out.trimmingCharacters(in: CharacterSet(charactersIn: "-")).prefix(40))
    }
}
