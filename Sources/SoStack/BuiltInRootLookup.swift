import Foundation
import SoBasics
import SoCompose

/// Where the built-in stacks were looked for, and the root found (nil: none).
public struct BuiltInRootLookup: Sendable, Equatable {
    public var root: String?
    /// The places tried, in order, for the error when there is no root.
    public var searched: [String]
    public init(root: String?, searched: [String]) {
        self.root = root
        self.searched = searched
    }
}
