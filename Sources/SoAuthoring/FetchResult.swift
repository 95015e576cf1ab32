import Foundation
import SoActions
import SoBasics
import SoStack

public struct FetchResult: Sendable, Encodable {
    public enum State: String, Sendable, Encodable {
        case cloned, present, updated
        case checkedOut = "checked-out"
        case wouldClone = "would-clone"
    }
    public var repository: String
    public var directory: String
    public var state: State
    public var ref: String?
    /// Stacks found in the checkout: name → the path to pass as --stack.
    public var stacks: [StackRef]
    public struct StackRef: Sendable, Encodable {
        public var name: String
        public var path: String
    }
}
