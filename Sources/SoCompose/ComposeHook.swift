import Foundation
import SoBasics

/// One `post_start`/`pre_stop` hook: a command run in the container, with compose's optional user,
/// privileges, working directory and environment (`extras` names those that were given).
public struct ComposeHook: Sendable, Equatable {
    public var command: [String]
    public var extras: [String]
    public init(command: [String], extras: [String] = []) {
        self.command = command
        self.extras = extras
    }
}
