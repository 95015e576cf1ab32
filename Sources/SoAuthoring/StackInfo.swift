import Foundation
import SoActions
import SoBasics
import SoCompose
import SoStack

public struct StackInfo: Sendable, Encodable {
    public struct Service: Sendable, Encodable {
        public var name: String
        public var image: String?
        public var ports: [String]
    }
    public struct Component: Sendable, Encodable {
        public var name: String
        public var composeFile: String
        public var services: [Service]
    }
    public var name: String
    public var builtIn: Bool
    public var directory: String
    public var description: String?
    public var pods: [Component]
    public var jobs: [Component]
    public var configDirectories: [String]
    public var images: [String]
    public var containers: [String]
    public var repos: [String]
}
