import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Compose `pull_policy` → Kubernetes `imagePullPolicy` (nil: no equivalent).
enum PullPolicy {
    static func kubernetes(_ compose: String) -> String? {
        switch compose {
        case "always": return "Always"
        case "never": return "Never"
        case "missing", "if_not_present", "build": return "IfNotPresent"
        case "daily", "weekly": return "Always"
        default: return compose.hasPrefix("every_") ? "Always" : nil
        }
    }
}
