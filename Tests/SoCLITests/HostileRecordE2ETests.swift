import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoDeploy

/// A record from the cluster is hostile input (issue 68), on a real node. A reader's home starts a deployment; a
/// writer who may only write Secrets in its namespace plants revisions (the Secrets `so` writes, created with
/// kubectl, their writer another host, once the reader's own); the reader's and a third home's verbs meet them.
/// Each case asserts what a user cares about: no file of the reader's machine in an object of the cluster, no
/// process started on the reader's machine, no object of another namespace touched, no privileged pod.
@Suite(.serialized, RealNode.required)
struct HostileRecordE2ETests {
    /// Revision `revision` of `id` in `namespace` with `files`, written by `host`: the Secrets `RecordStore` writes
    /// (made against a fake, then created on the real API server with kubectl, as anyone with Secret writes can).
    static func plant(
        _ files: [String: String], id: String, namespace: String, revision: Int, host: String, in t: TempDir
    ) async throws {
        let fake = FakeCluster()
        try fake.seed(KubeObject(.namespace, name: namespace))
        let record = DeploymentRecord(
            deployment: id, revision: revision, parent: revision - 1, writer: .init(user: "mallory", host: host),
            time: Date(), verb: "start", files: files.map { .init(path: $0.key, data: Data($0.value.utf8)) })
        _ = try await RecordStore(client: fake, namespace: namespace, deployment: id).write(
            record, changed: [], result: "started")
        for (key, json) in fake.all where key.type == .secret {
            guard case .object(var o) = json, case .object(var meta)? = o["metadata"] else { continue }
            for k in ["uid", "resourceVersion", "creationTimestamp"] { meta[k] = nil }
            o["metadata"] = .object(meta)
            let file = t.file("secret-\(revision)-\(key.name).json")
            try LocalFileSystem().writeText(JSONWriter.string(JSON.object(o).yValue, .compact), to: file)
            let r = try await E2E.kubectl(["create", "-f", file])
            #expect(r.exitCode == 0, "\(r.stderr)")
        }
    }

    /// The files of `dir` as a record holds them.
    static func files(_ dir: String) throws -> [String: String] {
        Dictionary(
            try RecordFiles.collect(dir, fs: LocalFileSystem(), secretKeys: []).map {
                ($0.path, String(decoding: $0.data, as: UTF8.self))
            }
        ) { a, _ in a }
    }

    @Test func aWriterOfSecretsReachesNothingOfTheReader() async throws {
        let t = try TempDir("so-e2e-hostile")
        defer { t.cleanup() }
        let name = RecordE2ETests.name("hostile")
        let victim = RecordE2ETests.name("victim")
        let homes = (reader: t.file("home-r"), writer: t.file("home-w"), third: t.file("home-t"))
        func env(_ home: String) -> [String: String] { ["SO_HOME": home, "SO_KUBECONFIG": E2E.kubeconfig!] }
        func so(_ args: [String], _ home: String) async throws -> ProcessResult {
            try await E2E.so(args, cwd: t.path, env: env(home))
        }
        let ran = t.file("ran")  // what a start command of the record writes: whose home ran it
        let secret = t.file("reader-secret")
        try t.write("reader-secret", "READER-SECRET-\(UInt32.random(in: 0...UInt32.max))\n")
        do { try await body() } catch {
            _ = try? await E2E.kubectl(["delete", "namespace", name, victim, "--wait=false"])
            throw error
        }
        _ = try? await E2E.kubectl(["delete", "namespace", name, victim, "--wait=false"])
        func body() async throws {
            var r = try await so(["up", Path.join(RealNode.stacks, "routes"), "--name", name], homes.reader)
            try #require(r.exitCode == 0, "\(r.stderr)")
            let readerDir = Path.join(homes.reader, "deployments/\(name)")
            let id = try #require(
                try t.read("home-r/deployments/\(name)/deployment.yml").split(separator: "\n")
                    .first { $0.hasPrefix("deployment-id:") }?.split(separator: " ").last.map(String.init))
            let base = try Self.files(readerDir)
            let compose = try #require(base.keys.sorted().first { $0.hasPrefix("compose/") }, "\(base.keys.sorted())")

            // Revision 2: a stack inside the directory whose start command runs on whoever starts it; 3: revision 1's
            // files again (the reader's own, by content, whoever the record says wrote it).
            var two = base
            two["config/s/stacks/t/stack.yml"] =
                "version: \"1.0\"\nname: t\npods:\n  - name: web\n    pre_start_command: echo \"$SO_HOME\" >> \(ran)\n"
            two["config/s/compose/docker-compose-web.yml"] = base[compose]
            two["spec.yml"] = try #require(base["spec.yml"]).replacingOccurrences(
                of: "stack: ", with: "stack: ./config/s/stacks/t\n# was: ")
            try await Self.plant(two, id: id, namespace: name, revision: 2, host: "writer-box", in: t)
            try await Self.plant(base, id: id, namespace: name, revision: 3, host: "writer-box", in: t)
            r = try await so(["deployment", "--name", name, "pull"], homes.reader)
            #expect(r.exitCode == 0, "revision 3 is the reader's own files: \(r.stderr)")
            r = try await so(["deployment", "--name", name, "rollback", "2"], homes.reader)
            #expect(r.exitCode == 77, "\(r.stderr)")
            #expect(r.stderr.contains("pre_start_command runs a command on this machine"), "\(r.stderr)")
            #expect(!((try? t.read("ran")) ?? "").contains(homes.reader), "no process of the record ran as the reader")

            // Revision 4: a compose config read from the reader's machine. The reader's pull and a third home's
            // --name are refused; no object of the cluster holds the file.
            var four = base
            four[compose] = try #require(base[compose]) + "configs:\n  k:\n    file: \(secret)\n"
            try await Self.plant(four, id: id, namespace: name, revision: 4, host: "writer-box", in: t)
            r = try await so(["deployment", "--name", name, "pull"], homes.reader)
            #expect(r.exitCode == 77 && r.stderr.contains("configs.k.file reads \(secret)"), "\(r.stderr)")
            r = try await so(["deployment", "--name", name, "start"], homes.third)
            #expect(r.exitCode == 77, "\(r.stderr)")
            #expect(!LocalFileSystem().exists(Path.join(homes.third, "deployments/\(name)")), "nothing made")
            let held = try await E2E.kubectl(["-n", name, "get", "configmaps,secrets", "-o", "json"])
            #expect(!held.stdout.contains(try t.read("reader-secret").trimmingCharacters(in: .whitespacesAndNewlines)))

            // Revision 5, under the reader's own host name: a privileged container. Refused all the same (a host name is
            // a label); no privileged pod runs.
            var five = base
            five[compose] = try #require(base[compose]).replacingOccurrences(
                of: "    image:", with: "    privileged: true\n    image:")
            try await Self.plant(
                five, id: id, namespace: name, revision: 5, host: ProcessInfo.processInfo.hostName, in: t)
            r = try await so(["deployment", "--name", name, "pull"], homes.reader)
            #expect(r.exitCode == 77 && r.stderr.contains("privileged is true"), "\(r.stderr)")
            let pods = try await E2E.kubectl(["-n", name, "get", "pods", "-o", "json"])
            #expect(!pods.stdout.contains("\"privileged\": true") && !pods.stdout.contains("\"privileged\":true"))

            // Revision 6 names another namespace: the third home's `down` removes this deployment only.
            r = try await E2E.kubectl(["create", "namespace", victim])
            #expect(r.exitCode == 0, "\(r.stderr)")
            r = try await E2E.kubectl(["-n", victim, "create", "configmap", "kept", "--from-literal=k=v"])
            var six = base
            let spec = try #require(base["spec.yml"])
            six["spec.yml"] =
                spec.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("namespace:") }.joined(separator: "\n") + "namespace: \(victim)\n"
            try await Self.plant(six, id: id, namespace: name, revision: 6, host: "writer-box", in: t)
            // Refused, the record makes no directory, so its work cannot be read: down without --discard keeps it all.
            r = try await so(["down", name, "--timeout", "120"], homes.third)
            #expect(r.exitCode == 77 && r.stderr.contains("--discard"), "\(r.stderr)")
            r = try await E2E.kubectl(["get", "namespace", name, "-o", "name"])
            #expect(r.exitCode == 0, "down without --discard left the namespace: \(r.stderr)")
            r = try await so(["down", name, "--discard", "--timeout", "120"], homes.third)
            #expect(r.exitCode == 0 && r.stderr.contains("spec.yml namespace names \(victim)"), "\(r.stderr)")
            r = try await E2E.kubectl(["-n", victim, "get", "configmap", "kept", "-o", "name"])
            #expect(r.exitCode == 0, "the other namespace is untouched: \(r.stderr)")
        }
    }
}
