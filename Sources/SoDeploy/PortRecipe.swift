import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

public enum PortRecipe: String, CaseIterable, Sendable {
    case anyVariableRandom = "any-variable-random"
    case localhostSame = "localhost-same"
    case anySame = "any-same"
    case localhostFixedRandom = "localhost-fixed-random"
    case anyFixedRandom = "any-fixed-random"
}
