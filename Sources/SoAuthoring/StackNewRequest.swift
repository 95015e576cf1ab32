import Foundation
import SoActions
import SoBasics
import SoCompose
import SoStack

public struct StackNewRequest: Sendable {
    public var name: String
    /// Compose files, merged in order (`-f` semantics).
    public var from: [String]
    /// Where the stack's tree goes (default `./NAME`): stacks/NAME/stack.yml, compose/, config/NAME/.
    public var output: String?
    public init(name: String, from: [String], output: String? = nil) {
        self.name = name
        self.from = from
        self.output = output
    }
}
