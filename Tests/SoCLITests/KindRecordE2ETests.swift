import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// Issue 68 on real kind: a record from the cluster does not choose the cluster. Two clusters on one host: the host's
/// kind cluster and the real node (SO_E2E_KUBECONFIG). Each case runs where both are (the kind tier of `.ci/run`
/// unsets SO_E2E_KUBECONFIG, so there they say why they are skipped).
extension KindE2ETests {
    static let secondCluster = E2E.kubeconfig != nil && RealNode.enabled
    static let noSecondCluster =
        "SO_E2E_KUBECONFIG with SO_E2E_REAL_NODE=1 is not set: no second cluster (the real node) beside kind"

    /// A copy of the real node's kubeconfig in `t`, as the reader's `$KUBECONFIG`: kind writes the contexts of the
    /// clusters it creates into `$KUBECONFIG`, and the real node's file is shared (a regression that created a
    /// cluster changed its current context, once).
    static func readersKubeconfig(in t: TempDir) throws -> String {
        try t.write("reader-kubeconfig", try LocalFileSystem().readText(E2E.kubeconfig!))
        return t.file("reader-kubeconfig")
    }

    /// `kubectl` on the kind cluster `name`.
    static func kindKubectl(_ name: String) -> ([String]) async throws -> ProcessResult {
        { args in try await KindE2E.run(["kubectl", "--context", "kind-\(name)"] + args) }
    }

    /// The context `kubectl args` uses and the API server it reaches, as `so` names them ("context C at S").
    static func place(_ kubectl: [String]) async throws -> String {
        let r = try await KindE2E.run(
            kubectl + [
                "config", "view", "--minify", "-o",
                "jsonpath=context {.contexts[0].name} at {.clusters[0].cluster.server}",
            ])
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A `deploy-to: k8s-kind` deployment started on the host's kind cluster; a teammate's revision says `deploy-to: k8s`.
    /// The reader's `$KUBECONFIG` names the real node: its `--name N status` and `down N` would have sent the
    /// directory made from the record there. Both are refused (exit 77, naming both places); no directory is left in
    /// the reader's home and the real node holds no namespace N.
    @Test(.enabled(if: secondCluster, "\(noSecondCluster)"))
    func aRecordOnKindDoesNotSendTheReaderToAnotherCluster() async throws {
        #expect(try await KindE2E.clusters().isEmpty, "a kind cluster is already running on this host")
        let t = try TempDir("so-e2e-kind-place")
        defer { t.cleanup() }
        try KindE2E.keeperStack(in: t)
        let id = try await KindE2E.keeperDeployment("dep", workers: 0, in: t)
        let ns = NameRules.dnsLabel(id)
        var r = try await E2E.so(
            [
                "deployment", "--dir", "dep", "start", "--perform-cluster-management", "--timeout", "600", "--progress",
                "plain",
            ], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        let name = try #require(try await KindE2E.clusters().first)
        do { try await body() } catch {
            try? await KindE2E.stopRemovingCluster("dep", in: t)
            throw error
        }
        try await KindE2E.stopRemovingCluster("dep", in: t)
        func body() async throws {
            let onKind = Self.kindKubectl(name)

            // A teammate's revision 2 (the Secrets `so` writes, by mallory on writer-box): the same files but
            // deploy-to: k8s, and a kube-config of their machine.
            var files = try HostileRecordE2ETests.files(t.file("dep"))
            let spec = try #require(files["spec.yml"])
            #expect(spec.contains("deploy-to: k8s-kind"), "\(spec)")
            files["spec.yml"] =
                spec.replacingOccurrences(of: "deploy-to: k8s-kind", with: "deploy-to: k8s")
                + "kube-config: /home/mallory/.kube/config\n"
            try await HostileRecordE2ETests.plant(
                files, id: id, namespace: ns, revision: 2, host: "writer-box", in: t, kubectl: onKind)

            let reader = t.file("home-r")
            let env = ["SO_HOME": reader, "KUBECONFIG": try Self.readersKubeconfig(in: t), "SO_KUBECONFIG": ""]
            let kind = try await Self.place(["kubectl", "--context", "kind-\(name)"])
            let real = try await Self.place(["kubectl", "--kubeconfig", E2E.kubeconfig!])
            #expect(kind.hasPrefix("context kind-\(name) at https://") && real.contains(" at https://") && kind != real)
            for verb in [["deployment", "--name", ns, "status"], ["down", ns, "--timeout", "60"]] {
                r = try await E2E.so(verb, cwd: t.path, env: env)
                #expect(r.exitCode == 77, "\(verb): \(r.stdout)\n\(r.stderr)")
                #expect(
                    r.stderr.contains("found on \(kind),")
                        && r.stderr.contains("would have this machine's verbs reach \(real)\n"),
                    "\(verb): \(r.stderr)")
                #expect(!LocalFileSystem().exists(Path.join(reader, "deployments/\(ns)")), "\(verb): no directory left")
                let left = (try? LocalFileSystem().walk(reader).map(\.relative)) ?? []
                #expect(
                    !left.contains { $0.contains(ns) }, "\(verb): nothing of the record in the reader's home: \(left)")
                let there = try await E2E.kubectl(["get", "namespace", ns, "-o", "name"])
                #expect(
                    there.exitCode != 0 && there.stderr.contains("NotFound"), "\(verb): the real node: \(there.stdout)")
            }
            // The deployment itself is untouched on kind (down without --discard deletes nothing).
            r = try await onKind(["-n", ns, "get", "pods", "-l", "app.kubernetes.io/component=kw", "-o", "name"])
            #expect(r.stdout.contains("pod/"), "\(r.stdout)\n\(r.stderr)")
        }
    }

    /// A `k8s-kind` record found on the real node brings its own kind-config.yml (the node image here, and an extra
    /// mount of the host's `/`) to this host, which has kind but no kind cluster. Run before any kind cluster exists
    /// (each case of this suite ends with none). The reader's `--name N start --perform-cluster-management`, with
    /// `$KUBECONFIG` naming the real node, starts it there (where it was found) and creates no cluster; the same
    /// directory started again with no cluster to reach refuses instead of creating one from the record's file.
    @Test(.enabled(if: secondCluster, "\(noSecondCluster)"))
    func aRecordsKindConfigMakesNoClusterHere() async throws {
        try #require(try await KindE2E.clusters().isEmpty, "a kind cluster is already running on this host")
        let t = try TempDir("so-e2e-kind-config")
        defer { t.cleanup() }
        let name = RecordE2ETests.name("kind-config")
        let writer = t.file("home-w")
        var r = try await E2E.so(
            ["up", Path.join(RealNode.stacks, "routes"), "--name", name, "--timeout", "120"], cwd: t.path,
            env: ["SO_HOME": writer, "SO_KUBECONFIG": E2E.kubeconfig!])
        do { try await body() } catch {
            _ = try? await E2E.kubectl(["delete", "namespace", name, "--wait=false"])
            throw error
        }
        _ = try? await E2E.kubectl(["delete", "namespace", name, "--wait=false"])
        func body() async throws {
            try #require(r.exitCode == 0, "\(r.stderr)")
            let dir = Path.join(writer, "deployments/\(name)")
            let id = try #require(
                try LocalFileSystem().readText(Path.join(dir, "deployment.yml")).split(separator: "\n")
                    .first { $0.hasPrefix("deployment-id:") }?.split(separator: " ").last.map(String.init))
            var files = try HostileRecordE2ETests.files(dir)
            #expect(files["spec.yml"]?.contains("deploy-to: k8s-kind") == true, "\(files["spec.yml"] ?? "")")
            files["kind-config.yml"] = """
                kind: Cluster
                apiVersion: kind.x-k8s.io/v1alpha4
                nodes:
                  - role: control-plane
                    image: \(KindE2E.nodeImage)
                    extraMounts:
                      - hostPath: /
                        containerPath: /host

                """
            try await HostileRecordE2ETests.plant(
                files, id: id, namespace: name, revision: 2, host: "writer-box", in: t)

            let reader = t.file("home-r")
            let listed = try await KindE2E.run(["kind", "get", "clusters"])
            try #require(listed.exitCode == 0, "kind answers here (else no cluster proves nothing): \(listed.stderr)")
            func noCluster(_ step: String) async throws {
                #expect(try await KindE2E.clusters().isEmpty, "\(step): no kind cluster made")
                let nodes = try await KindE2E.run(["docker", "ps", "-aq", "--filter", "label=io.x-k8s.kind.cluster"])
                #expect(nodes.stdout.isEmpty, "\(step): no kind node container: \(nodes.stdout)")
            }
            let start = ["deployment", "--name", name, "start", "--perform-cluster-management", "--timeout", "120"]
            r = try await E2E.so(
                start, cwd: t.path,
                env: ["SO_HOME": reader, "KUBECONFIG": try Self.readersKubeconfig(in: t), "SO_KUBECONFIG": ""])
            #expect(r.exitCode == 0, "started where it was found: \(r.stdout)\n\(r.stderr)")
            try await noCluster("--name start with the real node in $KUBECONFIG")
            r = try await E2E.kubectl(["-n", name, "get", "pods", "-o", "name"])
            #expect(r.stdout.contains("pod/"), "it runs on the real node: \(r.stdout)\n\(r.stderr)")
            #expect(
                try LocalFileSystem().readText(Path.join(reader, "deployments/\(name)/kind-config.yml")).contains(
                    "hostPath: /\n"), "the directory holds the record's kind-config.yml")

            // No cluster to reach now: `start` of that directory asks to manage clusters, and kind is here with none.
            try t.write("empty-kubeconfig", "")
            r = try await E2E.so(
                ["deployment", "--dir", Path.join(reader, "deployments/\(name)")] + start.dropFirst(3), cwd: t.path,
                env: ["SO_HOME": reader, "KUBECONFIG": t.file("empty-kubeconfig"), "SO_KUBECONFIG": ""])
            #expect(r.exitCode != 0 && r.stderr.contains("no cluster to use"), "\(r.stdout)\n\(r.stderr)")
            try await noCluster("--dir start with no cluster to reach")
        }
    }
}
