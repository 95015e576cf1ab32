import Foundation
import SoBasics

public struct ImagePullSecret: Sendable, Equatable {
    public var server: String
    public var username: String
    public var tokenEnv: String?
    public var tokenFile: String?
    /// spec.yml line of `image-pull-secret:`, for errors at start.
    public var line: Int?
}
