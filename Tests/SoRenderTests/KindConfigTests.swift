import SoBasics
import SoStack
import Testing

@testable import SoRender

@Suite struct KindConfigTests {
    @Test func umbrellaMountAndPerVolumeMounts() {
        let k = KindConfig(
            volumes: [("a", "/srv/kind/x/a"), ("b", "/data/b")], mountRoot: "/srv/kind",
            hostPorts: [.init(port: 5353, proto: .udp)])
        #expect(
            k.yaml() == """
                kind: Cluster
                apiVersion: kind.x-k8s.io/v1alpha4
                nodes:
                  - role: control-plane
                    kubeadmConfigPatches:
                      - |
                        kind: InitConfiguration
                        nodeRegistration:
                          kubeletExtraArgs:
                            node-labels: "ingress-ready=true"
                    extraPortMappings:
                      - containerPort: 80
                        hostPort: 80
                      - containerPort: 443
                        hostPort: 443
                      - containerPort: 5353
                        hostPort: 5353
                        protocol: UDP
                    extraMounts:
                      - hostPath: /srv/kind
                        containerPath: /mnt
                        propagation: HostToContainer
                      - hostPath: /data/b
                        containerPath: /mnt/b
                        propagation: HostToContainer

                """)
        #expect(KindConfig.nodePath(volume: "a", hostPath: "/srv/kind/x/a", mountRoot: "/srv/kind") == "/mnt/x/a")
        #expect(KindConfig.nodePath(volume: "b", hostPath: "/data/b", mountRoot: "/srv/kind") == "/mnt/b")
    }
}

/// `kind-workers:`: worker nodes beside the control plane, the host's paths mounted on the first (where the path
/// volumes' pods are pinned), the ports and the ingress label on the control plane, every node of the node image.
@Suite struct KindWorkersTests {
    @Test func workersTakeTheMountsAndTheControlPlaneKeepsThePorts() throws {
        let spec = try spec("stack: a\ndeploy-to: k8s-kind\nkind-workers: 2\nkind-node-image: kindest/node:v1.36.2\n")
        #expect(spec.kindWorkers == 2)
        let k = KindConfig(
            volumes: [("b", "/data/b")], mountRoot: nil, hostPorts: [], nodeImage: spec.kindNodeImage,
            workers: spec.kindWorkers)
        #expect(
            k.yaml() == """
                kind: Cluster
                apiVersion: kind.x-k8s.io/v1alpha4
                nodes:
                  - role: control-plane
                    image: kindest/node:v1.36.2
                    kubeadmConfigPatches:
                      - |
                        kind: InitConfiguration
                        nodeRegistration:
                          kubeletExtraArgs:
                            node-labels: "ingress-ready=true"
                    extraPortMappings:
                      - containerPort: 80
                        hostPort: 80
                      - containerPort: 443
                        hostPort: 443
                  - role: worker
                    image: kindest/node:v1.36.2
                    extraMounts:
                      - hostPath: /data/b
                        containerPath: /mnt/b
                        propagation: HostToContainer
                  - role: worker
                    image: kindest/node:v1.36.2

                """)
        #expect(KindConfig.mountNode(cluster: "so", workers: 2) == "so-worker")
        #expect(KindConfig.mountNode(cluster: "so", workers: 0) == "so-control-plane")
    }

    @Test func aWorkerCountOutOfRangeIsAnErrorAtItsLine() throws {
        for bad in ["-1", "9", "two"] {
            #expect(throws: SoError.self, "\(bad)") {
                _ = try spec("stack: a\ndeploy-to: k8s-kind\nkind-workers: \(bad)\n")
            }
        }
        let e = #expect(throws: SoError.self) { _ = try spec("stack: a\ndeploy-to: k8s-kind\nkind-workers: 9\n") }
        #expect(
            e?.description.contains("spec.yml:3") == true && e?.message.contains("0 to 8") == true,
            "\(String(describing: e))")
    }
}

/// The spec's `kind-node-image:` written into kind-config.yml. The suite keeps the name it has beside the key's
/// parsing tests (SoStackTests).
@Suite struct KindNodeImageSpecTests {
    @Test func theNodeImageIsReadAndWrittenIntoKindConfig() throws {
        let spec = try spec("stack: a\ndeploy-to: k8s-kind\nkind-node-image: kindest/node:v1.31.0\n")
        #expect(spec.kindNodeImage == "kindest/node:v1.31.0")
        let yaml = KindConfig(volumes: [], mountRoot: nil, hostPorts: [], nodeImage: spec.kindNodeImage).yaml()
        #expect(
            yaml.hasPrefix(
                "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane\n    image: kindest/node:v1.31.0\n"
            ),
            "\(yaml)")
        #expect(!KindConfig(volumes: [], mountRoot: nil, hostPorts: []).yaml().contains("image:"))
    }
}
