import Foundation
import SoBasics

public enum DeletePropagation: String, Sendable { case foreground = "Foreground", background = "Background", orphan = "Orphan" }
