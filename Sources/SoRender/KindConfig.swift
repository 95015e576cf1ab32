import Foundation
import SoBasics
import SoCompose

/// The kind cluster configuration a deployment needs (reference §8.1): one control-plane node labelled
/// `ingress-ready=true`, host ports 80/443 (+ host-network service ports), and extraMounts for host-path
/// volumes (one umbrella `kind-mount-root` → `/mnt` when set). With `kind-workers:`, that many worker nodes
/// besides, the mounts on the first (`CLUSTER-worker`, where the path volumes' pods are pinned: kind keeps
/// workloads off a control plane that has workers). Pure: paths come in already absolute.
public struct KindConfig: Sendable, Equatable {
    /// Made by `init` only (its memberwise initializer is internal).
    public struct Mount: Sendable, Equatable {
        public var hostPath: String
        public var containerPath: String
    }
    /// Host port `port` to the node's port `port` (a NodePort, a hostPort or a host-network port).
    public struct PortMapping: Sendable, Equatable {
        public var port: Int
        public var proto: PortProtocol
        /// The host address kind listens on (compose's host IP); nil: every address.
        public var listenAddress: String?
        public init(port: Int, proto: PortProtocol, listenAddress: String? = nil) {
            self.port = port
            self.proto = proto
            self.listenAddress = listenAddress
        }
    }

    public var mounts: [Mount]
    public var ports: [PortMapping]
    /// The node image (`kind-node-image:` in the spec); nil: the default of the kind release in use.
    public var nodeImage: String?
    /// Worker nodes beside the control plane (`kind-workers:`).
    public var workers = 0

    /// - Parameters:
    ///   - volumes: spec volumes with an absolute host path, in spec order.
    ///   - mountRoot: the umbrella `kind-mount-root`, absolute.
    ///   - hostPorts: node ports the host must reach (the port plan's `kindPorts`).
    ///   - nodeImage: the node image kind creates the node from (`kind-node-image:`), nil for kind's default.
    public init(
        volumes: [(name: String, hostPath: String)], mountRoot: String?, hostPorts: [PortMapping],
        nodeImage: String? = nil, workers: Int = 0
    ) {
        self.nodeImage = nodeImage
        self.workers = workers
        var mounts: [Mount] = []
        if let mountRoot { mounts.append(Mount(hostPath: Path.normalize(mountRoot), containerPath: "/mnt")) }
        for v in volumes {
            if let root = mountRoot, Path.isWithin(v.hostPath, root) { continue }
            mounts.append(Mount(hostPath: Path.normalize(v.hostPath), containerPath: "/mnt/\(v.name)"))
        }
        self.mounts = mounts
        var ports = [PortMapping(port: 80, proto: .tcp), PortMapping(port: 443, proto: .tcp)]
        for p in hostPorts where !ports.contains(where: { $0.port == p.port && $0.proto == p.proto }) {
            ports.append(p)
        }
        self.ports = ports
    }

    /// The kind node that holds the host paths (the mounts), where path volumes' pods are pinned: the first worker
    /// of a cluster with workers, else its only node.
    public static func mountNode(cluster: String, workers: Int) -> String {
        workers > 0 ? "\(cluster)-worker" : "\(cluster)-control-plane"
    }

    /// Where a volume's host path appears inside the kind node.
    public static func nodePath(volume: String, hostPath: String, mountRoot: String?) -> String {
        if let root = mountRoot, let rel = Path.relative(hostPath, to: root) {
            return rel == "." ? "/mnt" : "/mnt/" + rel
        }
        return "/mnt/\(volume)"
    }

    public func yaml() -> String {
        let patch = """
            kind: InitConfiguration
            nodeRegistration:
              kubeletExtraArgs:
                node-labels: "ingress-ready=true"

            """
        var node: [(String, YValue)] = [("role", .string("control-plane"))]
        if let nodeImage { node.append(("image", .string(nodeImage))) }
        node += [
            ("kubeadmConfigPatches", .list([.string(patch)])),
            (
                "extraPortMappings",
                .list(
                    ports.map { p in
                        var m: [(String, YValue)] = [("containerPort", .int(p.port)), ("hostPort", .int(p.port))]
                        if let a = p.listenAddress { m.append(("listenAddress", .string(a))) }
                        if p.proto != .tcp { m.append(("protocol", .string(p.proto.kubernetes))) }
                        return .map(m)
                    })
            ),
        ]
        let extraMounts = YValue.list(
            mounts.map {
                .map([
                    ("hostPath", .string($0.hostPath)), ("containerPath", .string($0.containerPath)),
                    ("propagation", .string("HostToContainer")),
                ])
            })
        if !mounts.isEmpty && workers == 0 { node.append(("extraMounts", extraMounts)) }
        var nodes: [YValue] = [.map(node)]
        for i in 0..<workers {
            var worker: [(String, YValue)] = [("role", .string("worker"))]
            if let nodeImage { worker.append(("image", .string(nodeImage))) }
            if i == 0 && !mounts.isEmpty { worker.append(("extraMounts", extraMounts)) }
            nodes.append(.map(worker))
        }
        return YValue.map([
            ("kind", .string("Cluster")),
            ("apiVersion", .string("kind.x-k8s.io/v1alpha4")),
            ("nodes", .list(nodes)),
        ]).yaml()
    }
}
