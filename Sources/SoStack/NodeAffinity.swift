import Foundation
import SoBasics

public struct NodeAffinity: Sendable, Equatable {
    public var label: String
    public var value: String
}
