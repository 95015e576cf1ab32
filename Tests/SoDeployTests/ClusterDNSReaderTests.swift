import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// The DNS policy of a spec with `egress:` allows where the cluster's DNS answers, as the cluster reports it.
@Suite struct ClusterDNSTests {
    static func json(_ text: String) throws -> JSON { try JSON.parse(Data(text.utf8)) }

    static let service = """
        {"metadata": {"name": "kube-dns", "namespace": "kube-system"}, "spec": {"clusterIP": "10.96.0.10", "selector": {"k8s-app": "kube-dns"}}}
        """

    @Test func coreDNSPodsAreAllowedByTheServicesSelector() throws {
        let slice = try Self.json(
            """
            {"endpoints": [{"addresses": ["10.244.0.3"], "targetRef": {"kind": "Pod", "name": "coredns-1"}},
                           {"addresses": ["10.244.0.4"], "targetRef": {"kind": "Pod", "name": "coredns-2"}}]}
            """)
        let dns = ClusterDNSReader.derive(service: try Self.json(Self.service), slices: [slice], nodeLocal: nil)
        #expect(dns == ClusterDNS(podSelector: ["k8s-app": "kube-dns"], addresses: []))
    }

    @Test func aServerOnTheNodesAddressIsAllowedByAddress() throws {
        // The kit: dnsmasq on the node's address, an EndpointSlice with no Pod behind it.
        let slice = try Self.json(#"{"endpoints": [{"addresses": ["10.250.0.1"]}]}"#)
        let dns = ClusterDNSReader.derive(service: try Self.json(Self.service), slices: [slice], nodeLocal: nil)
        #expect(dns == ClusterDNS(podSelector: nil, addresses: ["10.250.0.1"]))
    }

    @Test func nodeLocalDNSCacheAddsItsAddressAndTheServiceIP() throws {
        let slice = try Self.json(#"{"endpoints": [{"addresses": ["10.244.0.3"], "targetRef": {"kind": "Pod"}}]}"#)
        let ds = try Self.json(
            """
            {"spec": {"template": {"spec": {"containers": [{"name": "node-cache", "args": ["-localip", "169.254.20.25,10.96.0.10", "-conf", "/etc/Corefile"]}]}}}}
            """)
        let dns = ClusterDNSReader.derive(service: try Self.json(Self.service), slices: [slice], nodeLocal: ds)
        #expect(dns == ClusterDNS(podSelector: ["k8s-app": "kube-dns"], addresses: ["169.254.20.25", "10.96.0.10"]))
    }

    @Test func nothingUsableKeepsTheGenericRule() async throws {
        let noSelector = try Self.json(#"{"spec": {"clusterIP": "10.96.0.10"}}"#)
        let podSlice = try Self.json(#"{"endpoints": [{"addresses": ["10.244.0.3"], "targetRef": {"kind": "Pod"}}]}"#)
        #expect(ClusterDNSReader.derive(service: noSelector, slices: [podSlice], nodeLocal: nil) == nil)
        #expect(ClusterDNSReader.derive(service: try Self.json(Self.service), slices: [], nodeLocal: nil) == nil)
        // A cluster that answers nothing about kube-system (the fake has none of it): nil, no error.
        let read = await ClusterDNSReader(client: FakeCluster()).read()
        #expect(read == nil)
    }

    /// Read from a cluster: the Service, its EndpointSlices by label, and no NodeLocal DNSCache.
    @Test func readAsksTheClusterForTheServiceAndItsSlices() async throws {
        let cluster = FakeCluster()
        try cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Service", name: "kube-dns", namespace: "kube-system",
                body: [("spec", .map([("clusterIP", .string("10.96.0.10"))]))]))
        try cluster.seed(
            KubeObject(
                apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", name: "kube-dns-x", namespace: "kube-system",
                labels: [("kubernetes.io/service-name", "kube-dns")],
                body: [("endpoints", .list([.map([("addresses", .list([.string("10.250.0.1")]))])]))]))
        let dns = await ClusterDNSReader(client: cluster).read()
        #expect(dns == ClusterDNS(podSelector: nil, addresses: ["10.250.0.1"]))
        #expect(cluster.calls.contains("get DaemonSet kube-system/node-local-dns"), "\(cluster.calls)")
    }

    @Test func theDNSPolicyIsNoWiderThanWhatTheClusterReported() throws {
        let t = try TempDir("so-dns")
        defer { t.cleanup() }
        try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
        try t.write("stack.yml", "name: s\npods: [p]\n")
        try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\negress: [10.1.0.0/16]\n")
        try t.write("config.env", "")
        try t.write("compose/docker-compose-p.yml", "services:\n  a:\n    image: x\n")
        let model = try DeploymentLoader.load(t.path, fs: LocalFileSystem(), diagnostics: .init())
        func dnsTo(_ dns: ClusterDNS?) throws -> String {
            let m = try Renderer.render(model, options: RenderOptions(clusterDNS: dns))
            let policy = try #require(m.objects.first { $0.name == "laconic-d-dns" })
            return policy.yaml()
        }
        #expect(
            try dnsTo(nil).contains(
                "    - to:\n        - namespaceSelector:\n            matchLabels:\n              kubernetes.io/metadata.name: kube-system\n      ports:"
            ))
        let kit = try dnsTo(ClusterDNS(podSelector: nil, addresses: ["10.250.0.1"]))
        #expect(
            kit.contains("    - to:\n        - ipBlock:\n            cidr: 10.250.0.1/32\n      ports:")
                && !kit.contains("namespaceSelector"), "\(kit)")
        let kind = try dnsTo(ClusterDNS(podSelector: ["k8s-app": "kube-dns"], addresses: []))
        #expect(
            kind.contains(
                "kube-system\n          podSelector:\n            matchLabels:\n              k8s-app: kube-dns\n      ports:"
            ), "\(kind)")
    }
}
