import Foundation
import SoBasics

/// A compose file as its author wrote it, decoded strictly. Values are interpolated when the file was
/// loaded with an environment, and kept raw (`${VAR}` as written) when loaded without one.
public struct ComposeFile: Sendable {
    /// Absolute path of the file.
    public var path: String
    /// The directory relative paths are resolved from.
    public var directory: String { Path.dirname(path) }
    public var name: String?
    /// Services in file order.
    public var services: [ComposeService]
    /// Top-level named volumes in file order (external/driver details are not used by `so` yet).
    public var volumes: [ComposeNamedVolume]
    public var networks: [String]
    public var secrets: [ComposeTopLevelResource]
    public var configs: [ComposeTopLevelResource]
    /// Written in compose's version-1 layout (services at the top level), read as the current one (`ComposeLayout`).
    public var version1 = false

    public init(
        path: String, name: String? = nil, services: [ComposeService] = [], volumes: [ComposeNamedVolume] = [],
        networks: [String] = [], secrets: [ComposeTopLevelResource] = [], configs: [ComposeTopLevelResource] = []
    ) {
        self.path = path
        self.name = name
        self.services = services
        self.volumes = volumes
        self.networks = networks
        self.secrets = secrets
        self.configs = configs
    }

    public func service(_ name: String) -> ComposeService? { services.first { $0.name == name } }
}
