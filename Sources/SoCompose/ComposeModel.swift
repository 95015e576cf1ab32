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

    public init(path: String, name: String? = nil, services: [ComposeService] = [], volumes: [ComposeNamedVolume] = [],
                networks: [String] = [], secrets: [ComposeTopLevelResource] = [], configs: [ComposeTopLevelResource] = []) {
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

public struct ComposeNamedVolume: Sendable, Equatable {
    public var name: String
    public var external: Bool
    public var line: Int?
    public init(name: String, external: Bool = false, line: Int? = nil) {
        self.name = name
        self.external = external
        self.line = line
    }
}

/// Top-level `secrets:` / `configs:` entry: from a file, an environment variable or inline content.
public struct ComposeTopLevelResource: Sendable, Equatable {
    public var name: String
    public var file: String?
    public var environment: String?
    public var content: String?
    public var external: Bool
    public var line: Int?
    public init(name: String, file: String? = nil, environment: String? = nil, content: String? = nil, external: Bool = false, line: Int? = nil) {
        self.name = name
        self.file = file
        self.environment = environment
        self.content = content
        self.external = external
        self.line = line
    }
}

public struct ComposeService: Sendable {
    public var name: String
    /// Line of the service's key in the file.
    public var line: Int?
    public var image: String?
    public var build: ComposeBuild?
    /// Environment in file order. A nil value is a bare `KEY` (list form) or `KEY:` with no value
    /// (map form): compose takes it from the environment when it has one.
    public var environment: [EnvEntry]
    public var envFiles: [ComposeEnvFile]
    /// `ports:` entries as decoded, one per entry (after interpolation when the file was interpolated).
    public var portEntries: [ComposePortEntry] = []
    /// `ports:` parsed, after interpolation: empty in a file read as written (`environment: nil`), whose
    /// text may hold `${VAR}`; parse `portEntries` with the deployment's values there (`ComposePorts.parse(_:environment:)`).
    public var ports: [ComposePort]
    /// `expose:` entries, ranges expanded (no host side); like `ports`, parsed only after interpolation.
    public var expose: [ComposePort]
    public var volumes: [ComposeVolumeMount]
    /// nil when not given; a string form is split like a shell would.
    public var entrypoint: [String]?
    public var command: [String]?
    public var healthcheck: ComposeHealthcheck?
    public var dependsOn: [ComposeDependency]
    public var deploy: ComposeDeploy?
    public var user: String?
    public var workingDir: String?
    public var labels: [(String, String)]
    public var restart: String?
    public var networkMode: String?
    public var networks: [String]
    public var secrets: [ComposeServiceResourceRef]
    public var configs: [ComposeServiceResourceRef]
    public var extraHosts: [String]
    public var capAdd: [String]
    public var capDrop: [String]
    public var privileged: Bool?
    public var readOnly: Bool?
    public var profiles: [String]
    /// The long tail, as written (nil or empty when absent).
    public var hostname: String?
    public var stopGracePeriod: String?
    public var sysctls: [(String, String)] = []
    public var tmpfs: [String] = []
    public var shmSize: String?
    public var stdinOpen: Bool?
    public var tty: Bool?
    public var platform: String?
    public var runtime: String?
    public var dns: [String] = []
    public var dnsSearch: [String] = []
    /// `dns_opt` entries as written (`ndots:2`, `edns0`).
    public var dnsOpt: [String] = []
    /// `always`, `never`, `missing`, `if_not_present`, `build`, `daily`, `weekly`, `every_<duration>`.
    public var pullPolicy: String?
    /// `security_opt` entries as written (`no-new-privileges:true`, `seccomp:unconfined`, `label:…`).
    public var securityOpt: [String] = []
    /// `post_start` / `pre_stop` lifecycle hooks, in order.
    public var postStart: [ComposeHook] = []
    /// `annotations` (map or `K=V` list), in file order.
    public var annotations: [(String, String)] = []
    public var preStop: [ComposeHook] = []
    /// `links:` entries: the service linked and the name it is reached by (`db:database`; the service's own name when no alias).
    public var links: [(service: String, alias: String)] = []
    /// `volumes_from:` entries as written (`web`, `web:ro`, `container:name`); their mounts are added to `volumes`
    /// (`inheritedFrom` set) by the loader, where the named service is in the same file.
    public var volumesFrom: [String] = []
    /// Keys of the service that `so` accepts but does not model individually (container_name, tty …),
    /// with the line of their value, in file order; for mapping reports.
    public var otherKeys: [(key: String, line: Int?)]
    /// Every key the service was written with (extensions aside), in file order: for mapping reports.
    public var keys: [(key: String, line: Int?)] = []

    public init(name: String, line: Int? = nil) {
        self.name = name
        self.line = line
        environment = []
        envFiles = []
        ports = []
        expose = []
        volumes = []
        dependsOn = []
        labels = []
        networks = []
        secrets = []
        configs = []
        extraHosts = []
        capAdd = []
        capDrop = []
        profiles = []
        otherKeys = []
    }
}

public struct EnvEntry: Sendable, Equatable {
    public var key: String
    public var value: String?
    public var line: Int?
    public init(key: String, value: String?, line: Int? = nil) {
        self.key = key
        self.value = value
        self.line = line
    }
}

public struct ComposeEnvFile: Sendable, Equatable {
    public var path: String
    public var required: Bool
    public init(path: String, required: Bool = true) {
        self.path = path
        self.required = required
    }
}

public struct ComposeBuild: Sendable, Equatable {
    public var context: String
    public var dockerfile: String?
    public var args: [String: String]
    public var target: String?
    public init(context: String, dockerfile: String? = nil, args: [String: String] = [:], target: String? = nil) {
        self.context = context
        self.dockerfile = dockerfile
        self.args = args
        self.target = target
    }
}

/// A port's protocol, as compose writes it (lowercase).
public enum PortProtocol: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case tcp, udp, sctp
    /// As Kubernetes writes it (`TCP`, `UDP`, `SCTP`).
    public var kubernetes: String { rawValue.uppercased() }
    public var description: String { rawValue }
}

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

/// One published or exposed port, parsed once. Ranges expand to one entry per port when both sides are
/// ranges of the same length (or when there is no host side).
public struct ComposePort: Sendable, Equatable {
    public var hostIP: String?
    /// The fixed host port, nil when not published to one (no host side, or a host range).
    public var hostPort: Int?
    /// A host range for one container port (`8000-8010:80`): the runtime picks a free one.
    public var hostRange: ClosedRange<Int>?
    public var containerPort: Int
    public var proto: PortProtocol
    /// The text as written (short syntax) or a synthesized short form (long syntax).
    public var raw: String
    public init(hostIP: String? = nil, hostPort: Int? = nil, hostRange: ClosedRange<Int>? = nil, containerPort: Int, proto: PortProtocol = .tcp, raw: String) {
        self.hostIP = hostIP
        self.hostPort = hostPort
        self.hostRange = hostRange
        self.containerPort = containerPort
        self.proto = proto
        self.raw = raw
    }
}

public struct ComposeVolumeMount: Sendable, Equatable {
    public enum Kind: String, Sendable { case volume, bind, tmpfs, npipe, cluster }
    public var kind: Kind
    /// Named volume name or host path as written (nil for anonymous volumes and tmpfs).
    public var source: String?
    public var target: String
    public var readOnly: Bool
    /// Options after the second colon in short syntax (`ro`, `rw`, `z` …), joined by commas.
    public var options: String?
    public var raw: String
    public var line: Int?
    /// The service whose mount this is, when `volumes_from` brought it (nil: the service's own).
    public var inheritedFrom: String?
    public init(kind: Kind, source: String?, target: String, readOnly: Bool = false, options: String? = nil, raw: String, line: Int? = nil) {
        self.kind = kind
        self.source = source
        self.target = target
        self.readOnly = readOnly
        self.options = options
        self.raw = raw
        self.line = line
    }
    /// A host path source: starts with `/`, `.` or `~` (compose's rule for short syntax).
    public var isHostPath: Bool { kind == .bind }
}

public struct ComposeHealthcheck: Sendable, Equatable {
    /// `["CMD", …]`, `["CMD-SHELL", "…"]`, or `["NONE"]`; a string test becomes `["CMD-SHELL", text]`.
    public var test: [String]?
    public var interval: String?
    public var timeout: String?
    public var retries: Int?
    public var startPeriod: String?
    public var startInterval: String?
    public var disable: Bool
    public init(test: [String]? = nil, interval: String? = nil, timeout: String? = nil, retries: Int? = nil, startPeriod: String? = nil,
                startInterval: String? = nil, disable: Bool = false) {
        self.test = test
        self.interval = interval
        self.timeout = timeout
        self.retries = retries
        self.startPeriod = startPeriod
        self.startInterval = startInterval
        self.disable = disable
    }
}

public struct ComposeDependency: Sendable, Equatable {
    public var service: String
    /// service_started (default) | service_healthy | service_completed_successfully
    public var condition: String
    /// `required: false`: the service starts even when this one is missing or failed.
    public var required: Bool
    /// `restart: true`: restart the dependent service when this one is updated.
    public var restart: Bool
    public init(service: String, condition: String = "service_started", required: Bool = true, restart: Bool = false) {
        self.service = service
        self.condition = condition
        self.required = required
        self.restart = restart
    }
}

public struct ComposeDeploy: Sendable, Equatable {
    public var replicas: Int?
    public var limits: ComposeResources?
    public var reservations: ComposeResources?
    public init(replicas: Int? = nil, limits: ComposeResources? = nil, reservations: ComposeResources? = nil) {
        self.replicas = replicas
        self.limits = limits
        self.reservations = reservations
    }
}

public struct ComposeResources: Sendable, Equatable {
    public var cpus: String?
    public var memory: String?
    public init(cpus: String? = nil, memory: String? = nil) {
        self.cpus = cpus
        self.memory = memory
    }
}

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
