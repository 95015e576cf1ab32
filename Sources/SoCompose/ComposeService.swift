import Foundation
import SoBasics

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
