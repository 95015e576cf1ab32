import Foundation
import SoBasics
import SoStack
import SoTestSupport
import Testing

@testable import SoRender

/// Where pods and their data go on a cluster of several nodes (issue 54): a path volume's PersistentVolume
/// names the node that holds the path; replicas spread over nodes; a workspace's pod avoids its pool-mates' nodes.
@Suite struct PlacementTests {
    static let withVolume = """
        services:
          app:
            image: x
            volumes: [data:/data]
        volumes: {data: {}}

        """

    func node(_ m: Manifest) -> [String] {
        let terms = m.object("PersistentVolume", "laconic-d-data")?["spec"]?["nodeAffinity"]?["required"]?[
            "nodeSelectorTerms"]
        guard case .list(let t)? = terms, case .list(let exprs)? = t.first?["matchExpressions"],
            exprs.first?["key"]?.string == "kubernetes.io/hostname", exprs.first?["operator"]?.string == "In",
            case .list(let values)? = exprs.first?["values"]
        else { return [] }
        return values.compactMap(\.string)
    }

    @Test func aPathVolumeIsPinnedToTheNodeThatHoldsIt() throws {
        // kind: the deployment's own cluster's node, which has the mounts (its kind-cluster-name when given).
        try deployment(compose: Self.withVolume, spec: "volumes: {data: ./data/data}\n") { _, model in
            let rendered = try Renderer.render(model)
            #expect(node(rendered) == ["laconic-c-control-plane"])
            // What start found (the host's kind cluster by another name, a cluster's only node) wins over that…
            var options = RenderOptions()
            options.volumeNode = .node("so-node")
            let found = try Renderer.render(model, options: options)
            #expect(node(found) == ["so-node"])
            // A cluster that will not say its nodes (not kind): none named, as before.
            options.volumeNode = .unknown
            let unknown = try Renderer.render(model, options: options)
            #expect(
                unknown.object("PersistentVolume", "laconic-d-data") != nil
                    && unknown.object("PersistentVolume", "laconic-d-data")?["spec"]?["nodeAffinity"] == nil)
        }
        try deployment(compose: Self.withVolume, spec: "volumes: {data: ./d}\nkind-cluster-name: team\n") { _, m in
            let rendered = try Renderer.render(m)
            #expect(node(rendered) == ["team-control-plane"])
        }
        // kind with workers: the first worker holds the mounts (kind keeps workloads off its control plane then).
        try deployment(compose: Self.withVolume, spec: "volumes: {data: ./d}\nkind-workers: 2\n") { _, m in
            let rendered = try Renderer.render(m)
            #expect(node(rendered) == ["laconic-c-worker"])
        }
        // …and the spec's volume-node wins over both, on kind or elsewhere.
        for deployTo in ["k8s-kind", "k8s"] {
            try deployment(
                compose: Self.withVolume, spec: "volumes: {data: ./d}\nvolume-node: worker-2\n", deployTo: deployTo
            ) { _, model in
                var options = RenderOptions()
                options.volumeNode = .node("so-node")
                let rendered = try Renderer.render(model, options: options)
                #expect(node(rendered) == ["worker-2"], "\(deployTo)")
            }
        }
        // A dynamic volume has no PersistentVolume of so's: the cluster pins it where it was first bound.
        try deployment(compose: Self.withVolume, spec: "volumes: {data: }\n", deployTo: "k8s") { _, model in
            let m = try Renderer.render(model)
            #expect(m.object("PersistentVolume", "laconic-d-data") == nil && m.object("PersistentVolumeClaim") != nil)
        }
    }

    @Test func onAnotherClusterAPathWithoutANodeIsRefusedNamingTheLineAndBothFixes() throws {
        try deployment(compose: Self.withVolume, spec: "volumes:\n  data: /srv/data\n", deployTo: "k8s") { t, model in
            let e = try #require(throws: SoError.self) { try Renderer.render(model) }
            #expect(
                e.location?.file == t.file("spec.yml") && e.location?.line == 5, "\(String(describing: e.location))")
            #expect(e.message.contains("volume 'data' is the path /srv/data") && e.message.contains("names no node"))
            #expect(
                e.hint?.contains("volume-node: NODE") == true
                    && e.hint?.contains("dynamic volume (volumes: {data: } without a path)") == true, "\(e.hint ?? "")")
        }
        // A bind of a directory deploy create made (data/<volume>) is a path on this machine too: its compose line.
        let bind = "services:\n  app:\n    image: x\n    volumes: [./state:/state]\n"
        try deployment(compose: bind, deployTo: "k8s", directories: ["data/host-path-state"]) { t, model in
            #expect(model.bindDirectories == ["compose/state": "host-path-state"], "\(model.bindDirectories)")
            let e = try #require(throws: SoError.self) { try Renderer.render(model) }
            #expect(e.location?.file.hasSuffix("docker-compose-p.yml") == true, "\(String(describing: e.location))")
        }
    }

    @Test func volumeNodeAndReplicaSpreadRefuseWhatIsNoName() throws {
        for (line, says) in [
            ("volume-node: 'a b'\n", "volume-node 'a b' is not a node name"),
            ("volume-node: '../x'\n", "volume-node '../x' is not a node name"),
            ("replica-spread: always\n", "replica-spread 'always' is not one of soft, hard, none"),
        ] {
            do {
                try deployment(compose: Self.withVolume, spec: line) { _, _ in Issue.record("accepted \(line)") }
            } catch let e as SoError {
                #expect(e.message.contains(says) && e.location?.line == 3, "\(e.message)")
            }
        }
    }

    func spread(_ m: Manifest, _ name: String = "laconic-d-deployment") -> YValue? {
        m.object("Deployment", name)?["spec"]?["template"]?["spec"]?["topologySpreadConstraints"]?[0]
    }

    @Test func replicasSpreadOverNodesSoftlyUnlessTheSpecSaysHardOrNone() throws {
        let two =
            "services:\n  app:\n    image: x\n    deploy: {replicas: 2}\n  once:\n    image: x\n    restart: 'no'\n"
        try deployment(compose: two) { _, model in
            let rendered = try Renderer.render(model)
            let c = try #require(spread(rendered))
            #expect(c["topologyKey"]?.string == "kubernetes.io/hostname" && c["maxSkew"]?.int == 1)
            #expect(c["whenUnsatisfiable"]?.string == "ScheduleAnyway")
            #expect(c["labelSelector"]?["matchLabels"]?["app"]?.string == "laconic-d")
            #expect(c["matchLabelKeys"]?[0]?.string == "pod-template-hash")
        }
        try deployment(compose: two, spec: "replica-spread: hard\n") { _, model in
            let rendered = try Renderer.render(model)
            #expect(spread(rendered)?["whenUnsatisfiable"]?.string == "DoNotSchedule")
        }
        try deployment(compose: two, spec: "replica-spread: none\n") { _, model in
            let rendered = try Renderer.render(model)
            #expect(spread(rendered) == nil)
        }
        // One replica (the spec's replicas: wins over deploy.replicas): nothing to spread.
        try deployment(compose: two, spec: "replicas: 1\n") { _, model in
            let rendered = try Renderer.render(model)
            #expect(spread(rendered) == nil)
        }
    }
}
