import Foundation
import SoBasics

/// A service's reference to a top-level secret or config (short: name; long: source/target/mode).
public struct ComposeServiceResourceRef: Sendable, Equatable {
    public var source: String
    public var target: String?
    /// File mode as written (`0440` stays octal text).
    public var mode: String?
    public var uid: String?
    public var gid: String?
    public init(source: String, target: String? = nil, mode: String? = nil, uid: String? = nil, gid: String? = nil) {
        self.source = source
        self.target = target
        self.mode = mode
        self.uid = uid
        self.gid = gid
    }
}
