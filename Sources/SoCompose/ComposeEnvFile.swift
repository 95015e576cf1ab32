import Foundation
import SoBasics

public struct ComposeEnvFile: Sendable, Equatable {
    public var path: String
    public var required: Bool
    public init(path: String, required: Bool = true) {
        self.path = path
        self.required = required
    }
}
