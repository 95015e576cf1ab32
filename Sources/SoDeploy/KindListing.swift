import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// What `kind get clusters` answered: the clusters, or why there is no list (`failed`: kind's last error line,
/// e.g. when its container engine is not running).
enum KindListing {
    case listed([String])
    case notInstalled
    case failed(String)

    /// Why there is no list, as the "tried" list says it.
    var why: String {
        switch self {
        case .listed: return ""
        case .notInstalled: return "kind is not installed"
        case .failed(let line): return "'kind get clusters' failed: " + line
        }
    }
}
