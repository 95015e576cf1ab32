import Foundation
import SoBasics

/// One `ports:` entry before it is parsed: short syntax text or a long-syntax mapping, as decoded.
public struct ComposePortEntry: Sendable {
    public var node: YNode
    /// The entry as written: the short syntax text, or a short form of a long-syntax entry's fields.
    public var written: String
    public var line: Int? { node.line }
    public init(node: YNode, written: String) {
        self.node = node
        self.written = written
    }
}
