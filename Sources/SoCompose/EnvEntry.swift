import Foundation
import SoBasics

public struct EnvEntry: Sendable, Equatable {
    public var key: String
    public var value: String?
    public var line: Int?
    public init(key: String, value: String?, line: Int? = nil) {
        self.key = key
        self.value = value
        self.line = line
    }
}
