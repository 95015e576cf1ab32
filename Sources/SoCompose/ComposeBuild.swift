import Foundation
import SoBasics

public struct ComposeBuild: Sendable, Equatable {
    public var context: String
    public var dockerfile: String?
    public var args: [String: String]
    public var target: String?
    public init(context: String, dockerfile: String? = nil, args: [String: String] = [:], target: String? = nil) {
        self.context = context
        self.dockerfile = dockerfile
        self.args = args
        self.target = target
    }
}
