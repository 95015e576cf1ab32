import Foundation
import SoBasics

public struct NodeToleration: Sendable, Equatable {
    public var key: String
    public var value: String?
}
