/// Where start found a deployment's path volumes to be (`RenderOptions.volumeNode`).
public enum VolumeNode: Sendable, Equatable {
    /// On this node: their PersistentVolumes name it.
    case node(String)
    /// Not known (a user who may not list the nodes of a cluster that is not kind): no node named, as before.
    case unknown
}
