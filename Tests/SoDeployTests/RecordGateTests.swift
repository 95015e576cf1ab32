import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// The one gate every revision of a record goes through before it is files on this disk (`RecordGate`): each path
/// (`materialize` for `--name`, `down`, a claim and the GitHub loop; `inStep` for the page; `pull`; `rollback`),
/// what it refuses, and that a refusal leaves nothing.
@Suite struct RecordGateTests {
    /// A teammate's revision in the cluster: the latest revision's files with `edit` applied, as revision N+1 by
    /// `host` (what `so deployment start --force` on their machine writes). Returns its number.
    @discardableResult
    static func plant(
        _ c: ClusterHarness, host: String = "laptop-b", _ edit: (inout [String: String]) throws -> Void
    ) async throws -> Int {
        let store = RecordTeamTests.store(c)
        let latest = try #require(try await store.heads().last)
        var files = Dictionary(
            try await store.read(latest).files.map { ($0.path, String(decoding: $0.data, as: UTF8.self)) }
        ) { a, _ in a }
        try edit(&files)
        let record = DeploymentRecord(
            deployment: c.id, revision: latest.revision + 1, parent: latest.revision,
            writer: .init(user: "mallory", host: host), time: Date(timeIntervalSince1970: 1_800_000_000),
            verb: "start", files: files.map { .init(path: $0.key, data: Data($0.value.utf8)) })
        _ = try await store.write(record, changed: [], result: "started")
        return record.revision
    }

    /// A deployment of a stack with start commands (`StartCommandsTests.makeStack`, in `t`), started here: the reader's
    /// own stack runs its own commands at its own start.
    static func startedWithCommands(_ t: TempDir) async throws -> (ClusterHarness, String) {
        let stack = try StartCommandsTests.makeStack(t)
        let c = try await ClusterHarness(stack: stack, environment: ["SO_REPO_BASE_DIR": t.file("repos")])
        c.h.processes.expect(["sh", "-c", "./prepare.sh"])
        c.h.processes.expect(["sh", "-c", "echo ready"])
        _ = try await c.start()
        return (c, stack)
    }

    static func noScratch(_ c: ClusterHarness) throws -> Bool {
        try !c.h.fs.walk(c.h.tmp.path).contains { $0.relative.contains(".pulling") }
    }

    /// The issue's first report: a teammate's revision 2 runs a start command of a stack inside the directory;
    /// revision 3 is harmless. `rollback 2` wrote revision 2's files and started them with no check. Now it is
    /// refused before a file is written, and nothing runs here.
    @Test func aRollbackToATeammatesRevisionIsChecked() async throws {
        let t = try TempDir("so-record-gate")
        defer { t.cleanup() }
        let (c, stack) = try await Self.startedWithCommands(t)
        defer { c.h.tmp.cleanup() }
        let theirs = try String(contentsOfFile: Path.join(stack, "stack.yml"), encoding: .utf8)
            .replacingOccurrences(of: "./prepare.sh", with: "touch /tmp/pwned-by-the-record")
        try await Self.plant(c) { files in
            files["config/app-stack/stack.yml"] = theirs
            files["spec.yml"] = try #require(files["spec.yml"]).replacingOccurrences(
                of: stack, with: "./config/app-stack")
        }
        try await Self.plant(c) { files in
            files["config/app-stack/stack.yml"] = nil
            files["spec.yml"] = files["spec.yml"]?.replacingOccurrences(of: "./config/app-stack", with: stack)
        }
        // Revision 3 is revision 1's files, which this machine started: its own, whoever the record says wrote it.
        _ = try await RecordAction(c.ctx).pull(directory: "dep", cluster: c.options)
        let before = try c.h.read("dep/spec.yml")
        let req = StartRequest(directory: "dep", cluster: c.options, wait: true, timeout: 30, progress: .plain)
        let e = await #expect(throws: SoError.self) { _ = try await RecordAction(c.ctx).rollback(req, to: 2) }
        #expect(
            e?.message.hasPrefix(
                "revision 2 of \(c.id) (start by mallory on laptop-b, as it says) is refused: "
                    + "config/app-stack/stack.yml pods.web.pre_start_command runs a command on this machine") == true,
            "\(e?.message ?? "")")
        #expect(e?.message.contains("nothing was written to \(c.h.path("dep"))") == true)
        #expect(e?.hint?.contains("rollback REV") == true && e?.hint?.contains("--accept-privilege") == true)
        #expect(try c.h.read("dep/spec.yml") == before)
        #expect(!c.h.processes.calls.contains { $0.arguments.joined().contains("pwned") }, "nothing ran here")
        #expect(try Self.noScratch(c))
        // A revision this machine ran is the way out (its own stack's commands run, as at its own start).
        c.h.processes.expect(["sh", "-c", "./prepare.sh"])
        c.h.processes.expect(["sh", "-c", "echo ready"])
        let (_, to, _) = try await RecordAction(c.ctx).rollback(req, to: 1)
        #expect(to == 1)
    }

    /// The issue's second report: a compose `configs:` file of the reader's machine (and an `env_file`, an
    /// `extends`, an `include`) is refused naming the file and key, on `--name` (`materialize`), and nothing is made.
    @Test(arguments: [
        ("configs", "configs:\n  k:\n    file: SECRET\n", "compose/docker-compose-web.yml configs.k.file reads SECRET"),
        ("include", "include:\n  - SECRET\n", "compose/docker-compose-web.yml include reads SECRET"),
        (
            "env_file", "    env_file: SECRET\n",
            "compose/docker-compose-web.yml services.web.env_file reads SECRET"
        ),
        (
            "extends", "    extends: {file: SECRET, service: x}\n",
            "compose/docker-compose-web.yml services.web.extends.file reads SECRET"
        ),
    ])
    func aComposeFileOfThisMachineIsRefused(_ key: String, _ yaml: String, _ said: String) async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        let compose = "compose/docker-compose-example.yml"
        let secret = c.h.path("home/.ssh/id_ed25519")
        try c.h.tmp.write("home/.ssh/id_ed25519", "KEY\n")
        try await Self.plant(c) { files in
            let text = try #require(files[compose], "\(files.keys.sorted())")
            let added = yaml.replacingOccurrences(of: "SECRET", with: secret)
            files[compose] =
                key == "configs" || key == "include"
                ? text + added
                : text.replacingOccurrences(of: "    image:", with: added + "    image:")
        }
        let other = RecordTeamTests.teammate(c)
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(other).materialize(name: c.id, client: c.cluster)
        }
        #expect(
            e?.message.contains(
                said.replacingOccurrences(of: "SECRET", with: secret).replacingOccurrences(
                    of: "compose/docker-compose-web.yml", with: compose) + " of this machine") == true,
            "\(e?.message ?? "")")
        #expect(!c.h.fs.exists(c.h.path("home-b/deployments/\(c.id)")), "nothing made")
        #expect(try Self.noScratch(c))
    }

    /// A revision whose stack is named through the directory's own name (`../N/config/…`) is reviewed where it will
    /// be loaded: its start commands are refused on `--name` though the scratch it is read in has another name.
    @Test func aPathThroughTheDirectorysOwnNameIsReviewedAsInPlace() async throws {
        let t = try TempDir("so-record-gate")
        defer { t.cleanup() }
        let (c, stack) = try await Self.startedWithCommands(t)
        defer { c.h.tmp.cleanup() }
        let theirs = try String(contentsOfFile: Path.join(stack, "stack.yml"), encoding: .utf8)
        try await Self.plant(c) { files in
            files["config/app-stack/stack.yml"] = theirs
            files["spec.yml"] = try #require(files["spec.yml"]).replacingOccurrences(
                of: stack, with: "../\(c.id)/config/app-stack")
        }
        let other = RecordTeamTests.teammate(c)
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(other).materialize(name: c.id, client: c.cluster)
        }
        #expect(e?.message.contains("pods.web.pre_start_command runs a command on this machine") == true)
        #expect(!c.h.fs.exists(c.h.path("home-b/deployments/\(c.id)")), "nothing made")
        #expect(try Self.noScratch(c))
    }

    /// The page (`inStep`) wrote the directory before it checked it and left it after a refusal; now nothing is
    /// written.
    @Test func thePagesDirectoryIsNotWrittenWhenRefused() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        try await Self.plant(c) { files in
            files["spec.yml"] = try #require(files["spec.yml"]) + "ca-certificates: [/etc/shadow]\n"
        }
        let page = RecordTeamTests.teammate(c)
        await #expect(throws: SoError.self) { _ = try await RecordAction(page).inStep(name: c.id, client: c.cluster) }
        #expect(!c.h.fs.exists(c.h.path("home-b/deployments/\(c.id)")))
        #expect(try Self.noScratch(c))
    }

    /// A revision that names another deployment or namespace than where it was found (what `down N` then deleted) is
    /// refused, even with --accept-privilege.
    @Test(arguments: ["deployment-id", "namespace"])
    func aRevisionOfAnotherPlaceIsRefused(_ key: String) async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        try await Self.plant(c) { files in
            if key == "namespace" {
                files["spec.yml"] = try #require(files["spec.yml"]) + "namespace: victim\n"
            } else {
                files["deployment.yml"] = try #require(files["deployment.yml"]).replacingOccurrences(
                    of: "deployment-id: \(c.id)", with: "deployment-id: victim")
            }
        }
        var other = RecordTeamTests.teammate(c)
        other.options.acceptPrivilege = true
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(other).materialize(name: c.id, client: c.cluster)
        }
        #expect(
            e?.message.contains(
                key == "namespace" ? "spec.yml namespace names victim" : "deployment.yml deployment-id names victim")
                == true, "\(e?.message ?? "")")
        #expect(e?.exitCode == RecordGate.refused)
        #expect(!c.h.fs.exists(c.h.path("home-b/deployments/\(c.id)")))
    }

    /// A writer of Secrets in the namespace replaces its record by one of another deployment (`victim`: its Secrets'
    /// label and its deployment.yml say the same). Where it was found is the Namespace's own label (written by whoever
    /// may write Namespaces), not the record's: refused. A directory made of it was the victim's on this machine (a
    /// `down N --discard` of it deleted the victim's volumes that no claim bound).
    @Test func aRecordRelabelledAsAnotherDeploymentIsRefused() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        let store = RecordTeamTests.store(c)
        let latest = try #require(try await store.heads().last)
        // Its spec names the namespace it is found in (else the namespace would be victim's, and refused as such).
        let files = try await store.read(latest).files.map { f in
            let text = String(decoding: f.data, as: UTF8.self)
            let edited =
                f.path == "deployment.yml"
                ? text.replacingOccurrences(of: "deployment-id: \(c.id)", with: "deployment-id: victim")
                : f.path == "spec.yml" ? text + "\nnamespace: \(c.id)\n" : text
            return DeploymentRecord.File(path: f.path, data: Data(edited.utf8), executable: f.executable)
        }
        #expect(files != (try await store.read(latest).files))
        try await store.removeAll()
        let record = DeploymentRecord(
            deployment: "victim", revision: 1, parent: nil, writer: .init(user: "mallory", host: "laptop-b"),
            time: Date(timeIntervalSince1970: 1_800_000_000), verb: "start", files: files)
        _ = try await RecordStore(client: c.cluster, namespace: c.id, deployment: "victim").write(
            record, changed: [], result: "started")
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(RecordTeamTests.teammate(c)).materialize(name: c.id, client: c.cluster)
        }
        #expect(
            e?.message.contains("deployment.yml deployment-id names victim, not \(c.id) whose record it is") == true,
            "\(e?.message ?? "")")
        #expect(e?.exitCode == RecordGate.refused)
        #expect(!c.h.fs.exists(c.h.path("home-b/deployments/\(c.id)")))
    }

    /// What a teammate's revision adds that the namespace did not have (a privileged container) is refused, naming
    /// it; `--accept-privilege` takes it after reading it.
    @Test func privilegeByProxyIsRefusedUnlessAccepted() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        try await Self.plant(c) { files in
            files["compose/docker-compose-example.yml"] = try #require(files["compose/docker-compose-example.yml"])
                .replacingOccurrences(
                    of: "    image:", with: "    privileged: true\n    cap_add: [SYS_ADMIN]\n    image:")
        }
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(c.ctx).pull(directory: "dep", cluster: c.options)
        }
        #expect(
            e?.message.contains(
                "compose/docker-compose-example.yml services.web.privileged is true; compose/docker-compose-example.yml "
                    + "services.web.cap_add adds SYS_ADMIN") == true, "\(e?.message ?? "")")
        var accepting = c.ctx
        accepting.options.acceptPrivilege = true
        #expect(try await RecordAction(accepting).pull(directory: "dep", cluster: c.options).revision == 2)
        #expect(try c.h.read("dep/compose/docker-compose-example.yml").contains("privileged: true"))
    }

    /// `so deployment diff` of a refused revision: each setting it refuses and where, read in a scratch directory that
    /// goes again; the reader's directory and a teammate's home are left as they were.
    @Test func aReviewListsWhatTheGateRefusesAndWritesNothing() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        let compose = "compose/docker-compose-example.yml"
        let before = try c.h.read("dep/\(compose)")
        #expect(try await RecordAction(c.ctx).review(name: nil, directory: "dep", cluster: c.options) == nil)
        let revision = try await Self.plant(c) { files in
            files[compose] = try #require(files[compose]).replacingOccurrences(
                of: "    image:", with: "    privileged: true\n    cap_add: [SYS_ADMIN]\n    image:")
        }
        let mine = try #require(try await RecordAction(c.ctx).review(name: nil, directory: "dep", cluster: c.options))
        #expect(
            mine.revision == revision && mine.described.hasPrefix("revision \(revision) of \(c.id) (start by mallory"))
        #expect(
            mine.findings.map(\.description) == [
                "\(compose) services.web.privileged is true", "\(compose) services.web.cap_add adds SYS_ADMIN",
            ])
        #expect(try c.h.read("dep/\(compose)") == before, "the reader's directory is not written")
        let other = RecordTeamTests.teammate(c)
        let theirs = try await RecordAction(other).review(name: c.id, directory: nil, cluster: c.options)
        #expect(theirs?.findings.map(\.kind) == [.privilege, .privilege])
        #expect(!c.h.fs.exists(c.h.path("home-b/deployments/\(c.id)")), "nothing made from the record")
        #expect(try Self.noScratch(c))
    }

    /// A directory the gate wrote is checked again at each start, for what is still the record's: the start commands
    /// of a stack the record names that appeared on this machine since are refused; the same stack named by the
    /// reader's own edit is the reader's.
    @Test func aStartOfADirectoryFromTheRecordChecksItAgain() async throws {
        let t = try TempDir("so-record-gate")
        defer { t.cleanup() }
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        let later = t.file("src/stack-orchestrator/stacks/app")
        try await Self.plant(c) { files in
            files["spec.yml"] = try #require(files["spec.yml"]).replacingOccurrences(
                of: "stack: ", with: "stack: \(later)\n# was: ")
        }
        let other = RecordTeamTests.teammate(c, ["SO_REPO_BASE_DIR": t.file("repos")])
        let dir = try #require(try await RecordAction(other).materialize(name: c.id, client: c.cluster))
        #expect(RecordFiles.step(in: dir, fs: c.h.fs)?.made?.revision == 2)
        _ = try StartCommandsTests.makeStack(t)
        let req = StartRequest(directory: dir, cluster: c.options, wait: true, timeout: 30, progress: .plain)
        let e = await #expect(throws: SoError.self) { try await StartAction(other).run(req) }
        #expect(
            e?.message.contains(
                "spec.yml stack names \(later)/stack.yml, whose pods.web.pre_start_command runs a command on this machine"
            )
                == true, "\(e?.message ?? "")")
        #expect(!c.h.processes.calls.contains { $0.arguments.first == "sh" }, "nothing ran here")
        // The reader's own edit of spec.yml makes the choice the reader's.
        try c.h.fs.write(
            Data((try c.h.read("home-b/deployments/\(c.id)/spec.yml") + "\n").utf8), to: Path.join(dir, "spec.yml"))
        c.h.processes.expect(["sh", "-c", "./prepare.sh"])
        c.h.processes.expect(["sh", "-c", "echo ready"])
        try await StartAction(other).run(req)
        #expect(RecordFiles.step(in: dir, fs: c.h.fs)?.made == nil, "started here: this machine's own")
    }

    /// `down` deletes PersistentVolumes labelled with its deployment only when they are not bound to another
    /// namespace's claim (a label is anyone's to write who made the volume).
    @Test func aStopKeepsVolumesBoundToAnotherNamespace() async throws {
        let c = try await ClusterHarness.withPathVolume()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "PersistentVolume", name: "victims-data", labels: [("app", c.id)],
                body: [
                    ("spec", .map([("claimRef", .map([("namespace", .string("victim")), ("name", .string("d"))]))]))
                ]))
        try await StopAction(c.ctx).run(
            StopRequest(directory: "dep", cluster: c.options, deleteVolumes: true, timeout: 30, volumeGuard: nil))
        #expect(c.cluster.object("PersistentVolume", "victims-data") != nil)
        #expect(!c.cluster.all.contains { $0.0.type == .persistentVolume && $0.0.name != "victims-data" })
    }

    /// A `deploy-to: k8s` directory made from a record has no kubeconfig.yml: its cluster is found as kubectl finds
    /// it ($KUBECONFIG), not refused as missing.
    @Test func aK8sDirectoryFromTheRecordFindsItsClusterAsKubectlDoes() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.read("dep/spec.yml").replacingOccurrences(of: "deploy-to: k8s-kind", with: "deploy-to: k8s")
                + "kube-config: /nowhere/kubeconfig\n")
        var step = RecordFiles.Step(deployment: c.id, revision: 1, digest: "x", copies: [])
        step.fromRecord = true
        try RecordFiles.writeStep(step, in: c.h.path("dep"), fs: c.h.fs)
        var ctx = c.ctx
        ctx.environment["KUBECONFIG"] = c.kubeconfig
        let model = try DeploymentLoader.load(c.h.path("dep"), fs: c.h.fs, diagnostics: DiagnosticSink())
        let target = try await ClusterTargets(ctx: ctx).find(model, ClusterOptions(), allowCreate: false)
        #expect(target?.connection.contextName != nil && target?.kubeconfigFile == nil)
    }

    /// A revision whose spec.yml does not load is refused naming the file, and its hint says that and the way out (not
    /// "another place", which it may not name).
    @Test func aRevisionWhoseSpecDoesNotLoadSaysSo() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        let n = try await Self.plant(c) { $0["spec.yml"] = "stack: [\n" }
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(RecordTeamTests.teammate(c)).materialize(name: c.id, client: c.cluster)
        }
        #expect(e?.message.contains("revision \(n) of \(c.id)") == true, "\(e?.message ?? "")")
        #expect(e?.message.contains("is refused: spec.yml does not load: ") == true, "\(e?.message ?? "")")
        let hint = e?.hint ?? ""
        #expect(
            hint.hasPrefix("this so cannot read its spec.yml") && hint.contains("rollback REV")
                && hint.contains("correct spec.yml in your own directory") && !hint.contains("another place"), "\(hint)"
        )
        #expect(e?.exitCode == RecordGate.refused)
        #expect(!c.h.fs.exists(c.h.path("home-b/deployments/\(c.id)")))
    }

    /// A revision that does not load is refused naming the file that did not: its `deployment.yml`, or its spec.
    @Test func aRevisionThatDoesNotLoadNamesTheFile() throws {
        let fs = MemoryFileSystem(currentDirectory: "/home/user", homeDirectory: "/home/user")
        fs.addFile("/home/user/d/deployment.yml", "cluster-id: [\n")
        fs.addFile("/home/user/d/spec.yml", "stack: x\n")
        let reads = RecordReads(dir: "/home/user/d", fs: fs, origin: RecordOrigin(namespace: "d", deployment: "d"))
        guard case .failure(let f) = reads.identity() else {
            Issue.record("a broken deployment.yml loaded")
            return
        }
        #expect(f.file == "deployment.yml" && f.kind == .place, "\(f.description)")
    }
}

/// A directory made from a record reaches the cluster its (writer's) files name on this machine: it must be the one
/// the record was found in (issue 68: `deploy-to` was not tied to where the record was).
@Suite struct RecordPlaceTests {
    @Test func aRecordThatWouldSendLaterVerbsToAnotherClusterIsRefused() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        // The writer's revision says deploy-to: k8s; on the reader's machine that is $KUBECONFIG's current context.
        _ = try await RecordGateTests.plant(c) {
            $0["spec.yml"] =
                ($0["spec.yml"] ?? "").replacingOccurrences(of: "deploy-to: k8s-kind", with: "deploy-to: k8s")
                + "kube-config: /nowhere/kubeconfig\n"
        }
        try c.h.tmp.write(
            "prod-kubeconfig", ClusterSelectionTests.kubeconfig(context: "prod", server: "https://prod.example:6443"))
        let reader = RecordTeamTests.teammate(c, ["KUBECONFIG": c.h.tmp.file("prod-kubeconfig")])
        // Found in the host's kind cluster (its API server elsewhere than prod's).
        let kind = ClusterTarget(
            connection: ClusterConnection(contextName: "kind-so", server: "https://127.0.0.1:7443"), kindCluster: "so")
        let dir = c.h.path("home-b/deployments/\(c.id)")
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(reader).materialize(
                name: c.id, client: c.cluster, foundIn: (kind, ClusterOptions()))
        }
        #expect(
            e?.message.contains("found on context kind-so at https://127.0.0.1:7443") == true
                && e?.message.contains("reach context prod at https://prod.example:6443") == true, "\(e?.message ?? "")"
        )
        #expect(e?.exitCode == RecordGate.refused)
        #expect(!c.h.fs.exists(dir), "nothing is left made from it")
        // Found where it says it runs (the same API server): made.
        let prod = ClusterTarget(
            connection: ClusterConnection(contextName: "prod", server: "https://prod.example:6443"), kindCluster: nil)
        let made = try await RecordAction(reader).materialize(
            name: c.id, client: c.cluster, foundIn: (prod, ClusterOptions()))
        #expect(made == dir && c.h.fs.exists(dir))
    }
}
