import Foundation
import SoBasics

public enum DeletePropagation: String, Sendable {
    case foreground = "Foreground"
    case background = "Background"
    case orphan = "Orphan"
}
