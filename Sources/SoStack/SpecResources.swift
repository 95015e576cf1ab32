import Foundation
import SoBasics

/// `resources:` of a spec: global or per-container CPU/memory, global or per-volume storage.
public struct SpecResources: Sendable, Equatable {
    public var containersGlobal: ContainerResources?
    public var containers: [String: ContainerResources] = [:]
    public var volumeStorageGlobal: String?
    public var volumeStorage: [String: String] = [:]
    public init() {}
}
