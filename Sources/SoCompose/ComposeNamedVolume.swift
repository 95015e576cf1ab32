import Foundation
import SoBasics

public struct ComposeNamedVolume: Sendable, Equatable {
    public var name: String
    public var external: Bool
    public var line: Int?
    public init(name: String, external: Bool = false, line: Int? = nil) {
        self.name = name
        self.external = external
        self.line = line
    }
}
