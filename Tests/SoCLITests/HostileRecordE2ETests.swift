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
    /// `kubectl`: the cluster they are created on (the real node's, unless another is given).
    static func plant(
        _ files: [String: String], id: String, namespace: String, revision: Int, host: String, in t: TempDir,
        kubectl: ([String]) async throws -> ProcessResult = E2E.kubectl
    ) async throws {
        try await plant(
            files: files.map { .init(path: $0.key, data: Data($0.value.utf8)) }, id: id, namespace: namespace,
            revision: revision, host: host, in: t, kubectl: kubectl)
    }

    /// `plant` of `files` as they are (an executable one stays so: the same files are the same revision's digest).
    static func plant(
        files: [DeploymentRecord.File], id: String, namespace: String, revision: Int, host: String, in t: TempDir,
        kubectl: ([String]) async throws -> ProcessResult = E2E.kubectl
    ) async throws {
        let fake = FakeCluster()
        try fake.seed(KubeObject(.namespace, name: namespace))
        let record = DeploymentRecord(
            deployment: id, revision: revision, parent: revision - 1, writer: .init(user: "mallory", host: host),
            time: Date(), verb: "start", files: files)
        _ = try await RecordStore(client: fake, namespace: namespace, deployment: id).write(
            record, changed: [], result: "started")
        for (key, json) in fake.all where key.type == .secret {
            guard case .object(var o) = json, case .object(var meta)? = o["metadata"] else { continue }
            for k in ["uid", "resourceVersion", "creationTimestamp"] { meta[k] = nil }
            o["metadata"] = .object(meta)
            let file = t.file("secret-\(revision)-\(key.name).json")
            try LocalFileSystem().writeText(JSONWriter.string(JSON.object(o).yValue, .compact), to: file)
            let r = try await kubectl(["create", "-f", file])
            #expect(r.exitCode == 0, "\(r.stderr)")
        }
    }

    /// What a revision adds to `base` to run a command on whoever starts it: a stack inside the directory (its pod the
    /// deployment's own, named after its compose file) whose `pre_start_command` appends `$SO_HOME` to `ran`, and the
    /// spec's `stack:` naming it.
    static func startingStack(_ base: [String: String], compose: String, ran: String) throws -> [String: String] {
        let pod = String(Path.basename(compose).dropFirst("docker-compose-".count).prefix { $0 != "." })
        return [
            "config/s/stacks/t/stack.yml":
                "version: \"1.0\"\nname: t\npods:\n  - name: \(pod)\n    pre_start_command: echo \"$SO_HOME\" >> \(ran)\n",
            "config/s/compose/docker-compose-\(pod).yml": try #require(base[compose]),
            "spec.yml": try #require(base["spec.yml"]).replacingOccurrences(
                of: "stack: ", with: "stack: ./config/s/stacks/t\n# was: "),
        ]
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
            for (path, text) in try Self.startingStack(base, compose: compose, ran: ran) { two[path] = text }
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
            six["spec.yml"] = Self.naming(victim, in: try #require(base["spec.yml"]))
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

    /// `so` as another machine runs it: in a UTS namespace of its own named `host` (as root: `unshare --uts`, then
    /// `hostname`), with `home` as its SO_HOME; `decoy` bound over `hidden` in a mount namespace of its own (the
    /// writer's machine has a file of its own at the path a revision names).
    static func soAs(
        _ host: String, _ args: [String], home: String, cwd: String, over hidden: String? = nil, decoy: String? = nil
    ) async throws -> ProcessResult {
        try await LocalProcessRunner().run(
            unshared(host, args, bind: hidden.flatMap { h in decoy.map { ($0, h) } }), workingDirectory: cwd,
            environment: environment(home), timeout: 300)
    }

    static func environment(_ home: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SO_ROOT"] = RepoPaths.root
        environment["SO_HOME"] = home
        environment["SO_KUBECONFIG"] = E2E.kubeconfig!
        return environment
    }

    /// The command line of `so args` under the host name `host` (`bind`: a file bound over another first).
    static func unshared(_ host: String, _ args: [String], bind: (String, String)? = nil) -> [String] {
        let mount = bind == nil ? "" : #"mount --bind "$2" "$3" && "#
        return [
            "unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c",
            #"hostname "$1" && "# + mount + #"shift 3 && exec "$@""#, "sh", host, bind?.0 ?? "-", bind?.1 ?? "-",
            E2E.binary,
        ] + args
    }

    /// The writer under another host name (and once under the reader's own) writes its revisions with `so` itself
    /// (`--name` on its machine, edit, `start --force`); the reader's `rollback`, `pull` and `start`, a third home's
    /// `--name`, `diff` and `down N`, and a page (`so dashboard` on a machine of its own name) meet them.
    @Test func aWriterOnAnotherHostReachesNothingOfTheReadersMachine() async throws {
        let t = try TempDir("so-e2e-hostile-uts")
        defer { t.cleanup() }
        let name = RecordE2ETests.name("hostile-w")
        let victim = RecordE2ETests.name("victim-w")
        let homes = (
            reader: t.file("home-r"), writer: t.file("home-w"), third: t.file("home-t"), page: t.file("home-p")
        )
        let readerHost = ProcessInfo.processInfo.hostName
        func so(_ args: [String], _ home: String) async throws -> ProcessResult {
            try await E2E.so(args, cwd: t.path, env: ["SO_HOME": home, "SO_KUBECONFIG": E2E.kubeconfig!])
        }
        func writer(_ args: [String], host: String = "writer-box", over: String? = nil) async throws -> ProcessResult {
            try await Self.soAs(
                host, args, home: homes.writer, cwd: t.path, over: over, decoy: over == nil ? nil : t.file("decoy"))
        }
        /// The number of the next revision of `name`'s record.
        func next() async throws -> Int {
            let r = try await so(["deployment", "--name", name, "history", "-o", "json"], homes.reader)
            let heads = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
            return (heads.compactMap { $0["revision"] as? Int }.max() ?? 0) + 1
        }
        let ran = t.file("ran")  // what a start command of the record writes: whose home ran it
        let secret = t.file("reader-secret")
        let secretText = "READER-SECRET-\(UInt32.random(in: 0...UInt32.max))"
        let decoyText = "WRITER-DECOY-\(UInt32.random(in: 0...UInt32.max))"
        try t.write("reader-secret", secretText + "\n")
        try t.write("decoy", decoyText + "\n")
        var page: Process?
        func cleanup() async {
            page?.terminate()
            _ = try? await E2E.kubectl(["delete", "namespace", name, victim, "--wait=false"])
        }
        do { try await body() } catch {
            await cleanup()
            throw error
        }
        await cleanup()
        func body() async throws {
            var r = try await so(["up", Path.join(RealNode.stacks, "routes"), "--name", name], homes.reader)
            try #require(r.exitCode == 0, "\(r.stderr)")
            r = try await writer(["deployment", "--name", name, "pull"])
            try #require(r.exitCode == 0, "the writer's directory from the record: \(r.stderr)")
            let wdir = Path.join(homes.writer, "deployments/\(name)")
            let base = try Self.files(wdir)
            let compose = try #require(base.keys.sorted().first { $0.hasPrefix("compose/") }, "\(base.keys.sorted())")
            let fs = LocalFileSystem()
            func write(_ files: [String: String]) throws {
                for (path, text) in files { try fs.writeText(text, to: Path.join(wdir, path)) }
            }

            // Revision 2, by the writer's own `start --force` on writer-box: a stack inside the directory whose start
            // command runs on whoever starts it (the writer's start runs it, as the writer). 3: revision 1's files again.
            try write(try Self.startingStack(base, compose: compose, ran: ran))
            r = try await writer(["deployment", "--name", name, "start", "--force"])
            try #require(r.exitCode == 0, "the writer's revision 2: \(r.stderr)")
            #expect(try t.read("ran").contains(homes.writer), "the writer's start ran its own command")
            try FileManager.default.removeItem(atPath: Path.join(wdir, "config/s"))
            try write(["spec.yml": try #require(base["spec.yml"])])
            r = try await writer(["deployment", "--name", name, "start", "--force"])
            try #require(r.exitCode == 0, "the writer's revision 3: \(r.stderr)")
            r = try await so(["deployment", "--name", name, "history"], homes.reader)
            #expect(r.stdout.contains("writer-box"), "the writer's revisions name its host: \(r.stdout)")
            r = try await so(["deployment", "--name", name, "pull"], homes.reader)
            #expect(r.exitCode == 0, "revision 3 holds nothing refused: \(r.stderr)")
            r = try await so(["deployment", "--name", name, "rollback", "2"], homes.reader)
            #expect(r.exitCode == 77, "\(r.stderr)")
            #expect(r.stderr.contains("pre_start_command runs a command on this machine"), "\(r.stderr)")
            #expect(!((try? t.read("ran")) ?? "").contains(homes.reader), "no process of the record ran as the reader")

            // Revision 4, written under the reader's own host name: a compose config read from a file whose path is
            // the reader's secret (on the writer's machine, its own decoy). The host name decides nothing: the reader's
            // pull is refused, its start applies nothing of it, a third home makes nothing; the cluster holds the
            // writer's decoy (the revision took effect) and never the reader's file.
            // The service mounts the config, so a start puts the file's content in a ConfigMap.
            let mounted = try #require(base[compose]).replacingOccurrences(
                of: "  web:\n", with: "  web:\n    configs: [k]\n")
            #expect(mounted != base[compose])
            try write([compose: mounted + "configs:\n  k:\n    file: \(secret)\n"])
            r = try await writer(["deployment", "--name", name, "start", "--force"], host: readerHost, over: secret)
            try #require(r.exitCode == 0, "the writer's revision 4: \(r.stderr)")
            r = try await so(["deployment", "--name", name, "history", "-o", "json"], homes.reader)
            let history = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
            #expect(
                history.first { $0["revision"] as? Int == 4 }?["host"] as? String == readerHost,
                "revision 4 says the reader's own host wrote it: \(r.stdout)")
            r = try await so(["deployment", "--name", name, "pull"], homes.reader)
            #expect(r.exitCode == 77 && r.stderr.contains("configs.k.file reads \(secret)"), "\(r.stderr)")
            r = try await so(["deployment", "--name", name, "start"], homes.reader)
            #expect(r.exitCode != 0, "the reader's directory is behind revision 4: \(r.stderr)")
            r = try await so(["deployment", "--name", name, "start"], homes.third)
            #expect(r.exitCode == 77, "\(r.stderr)")
            #expect(!fs.exists(Path.join(homes.third, "deployments/\(name)")), "nothing made")
            let held = try await E2E.kubectl(["-n", name, "get", "configmaps,secrets", "-o", "json"])
            #expect(
                held.stdout.contains(Data(decoyText.utf8).base64EncodedString().prefix(16))
                    || held.stdout.contains(decoyText))
            #expect(
                !held.stdout.contains(secretText)
                    && !held.stdout.contains(Data(secretText.utf8).base64EncodedString().prefix(16)))

            // Revision 5: a privileged container. `diff` lists it (file, key, what) and writes nothing; the page's start
            // is refused with the CLI's line and makes no directory; no privileged pod runs.
            var five = base
            five[compose] = try #require(base[compose]).replacingOccurrences(
                of: "    image:", with: "    privileged: true\n    image:")
            let id = try #require(Self.id(in: try t.read("home-r/deployments/\(name)/deployment.yml")))
            // Numbered after whatever the cluster holds (an older so's verbs above may have written revisions).
            let fifth = try await next()
            try await Self.plant(five, id: id, namespace: name, revision: fifth, host: "writer-box", in: t)
            let setting = "\(compose) services.web.privileged is true"
            r = try await so(["deployment", "--name", name, "diff"], homes.third)
            #expect(
                r.exitCode == 0 && r.stdout.contains("revision \(fifth) of \(id)") && r.stdout.contains(setting),
                "\(r.stdout)\(r.stderr)")
            #expect(!fs.exists(Path.join(homes.third, "deployments/\(name)")), "diff made nothing")
            r = try await so(["deployment", "--name", name, "diff", "-o", "json"], homes.reader)
            #expect(
                r.exitCode == 0 && r.stdout.contains("\"privilege\"") && r.stdout.contains("services.web.privileged"),
                "\(r.stdout)\(r.stderr)")
            r = try await so(["deployment", "--name", name, "start"], homes.third)
            #expect(r.exitCode == 77 && r.stderr.contains(setting), "\(r.stderr)")
            let refusal = r.stderr.split(separator: "\n").first { $0.hasPrefix("error: ") }?.dropFirst(7) ?? "(none)"
            let said = try await Self.pageActs("start", on: name, home: homes.page, host: "page-box", in: t) {
                page = $0
            }
            let expected = refusal.replacingOccurrences(of: homes.third, with: homes.page)
            #expect(said.message.hasPrefix(expected) && !said.ok, "the page: \(said.message)\nthe CLI: \(expected)")
            #expect(!fs.exists(Path.join(homes.page, "deployments/\(name)")), "the page made nothing")
            let pods = try await E2E.kubectl(["-n", name, "get", "pods", "-o", "json"])
            #expect(!pods.stdout.contains("\"privileged\": true") && !pods.stdout.contains("\"privileged\":true"))

            // Revision 6 names another deployment's id: the third home's `down N` removes N and nothing of the other.
            r = try await so(["up", Path.join(RealNode.stacks, "routes"), "--name", victim], homes.reader)
            try #require(r.exitCode == 0, "\(r.stderr)")
            let victimID = try #require(Self.id(in: try t.read("home-r/deployments/\(victim)/deployment.yml")))
            let victimPVs = try await Self.volumes(of: victim)
            #expect(!victimPVs.isEmpty, "the other deployment's api keeps a volume")
            var six = base
            six["deployment.yml"] = try #require(base["deployment.yml"]).replacingOccurrences(
                of: "deployment-id: \(id)", with: "deployment-id: \(victimID)")
            try await Self.plant(six, id: id, namespace: name, revision: try await next(), host: "writer-box", in: t)
            r = try await so(["down", name, "--discard", "--timeout", "120"], homes.third)
            #expect(
                r.exitCode == 0 && r.stderr.contains("deployment.yml deployment-id names \(victimID)"), "\(r.stderr)")
            r = try await E2E.kubectl(["-n", victim, "get", "deployments", "-o", "name"])
            #expect(
                r.exitCode == 0 && r.stdout.contains("deployment"), "the other deployment runs: \(r.stdout)\(r.stderr)")
            #expect(try await Self.volumes(of: victim) == victimPVs, "the other deployment's volumes are kept")
            r = try await so(["down", victim, "--discard", "--timeout", "120"], homes.reader)
            #expect(r.exitCode == 0, "\(r.stderr)")
        }
    }

    /// A claim of another machine's pool member whose record a writer changed to name one more `secret-env` variable
    /// than the pool was made with: the claimer's value of it reaches no object of the cluster and no container.
    @Test func aClaimHandsInThePoolsNamesOnly() async throws {
        let t = try TempDir("so-e2e-hostile-pool")
        defer { t.cleanup() }
        let stack = try AgentE2E.lightStack(in: t)
        try FileManager.default.copyItem(atPath: t.file("layout"), toPath: t.file("layout-b"))
        let stackB = t.file("layout-b/stacks/agent-workspace")
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let extra = "READER_EXTRA_\(UInt32.random(in: 0...UInt32.max))"
        let value = "reader-extra-\(UInt32.random(in: 0...UInt32.max))"
        let envB = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home-b"), extra: value]
        func a(_ args: [String]) async throws -> ProcessResult {
            try await Self.soAs("pool-box", args, home: t.file("home-a"), cwd: t.path)
        }
        func b(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: t.path, env: envB) }
        let pool = "e2e-hostile-\(Access.suffix())"
        let ws = "e2e-hostile-ws-\(Access.suffix())"
        let victim = "e2e-hostile-v-\(Access.suffix())"
        do {
            try await AgentE2E.removing(ws, t, envB) {
                var r = try await a([
                    "pool", "create", stack, "--name", pool, "--size", "1", "--config", "GIT_REPO=\(repo)",
                ])
                try #require(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                let listed = try await WorkspacePoolE2ETests.warm(pool, 1) { try await b($0) }
                let pools =
                    (try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]) ?? []
                let member = try #require(
                    (pools.first { $0["name"] as? String == pool }?["members"] as? [[String: Any]])?.first,
                    "\(listed.stdout)")
                let memberName = try #require(member["name"] as? String)
                let ns = try #require(member["namespace"] as? String)
                let mdir = t.file("home-a/deployments/\(memberName)")
                var files = try Self.files(mdir)
                let spec = try #require(files["spec.yml"])
                let id = try #require(Self.id(in: files["deployment.yml"] ?? ""))
                files["spec.yml"] = Self.addingSecretEnv(extra, to: spec)
                r = try await a(["deployment", "--name", memberName, "history", "-o", "json"])
                let heads = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
                let latest = try #require(heads.compactMap { $0["revision"] as? Int }.max(), "\(r.stdout)\(r.stderr)")
                try await Self.claimOfAnotherNamespace(
                    files, id: id, member: ns, after: latest, victim: victim, value: value, in: t
                ) {
                    try await b(["up", stackB, "--name", ws, "--config", "GIT_REPO=\(repo)", "--timeout", "120"])
                }
                #expect(!LocalFileSystem().exists(t.file("home-b/deployments/\(ws)")), "the claim made no directory")
                try await Self.plant(files, id: id, namespace: ns, revision: latest + 2, host: "writer-box", in: t)
                r = try await b([
                    "up", stackB, "--name", ws, "--config", "GIT_REPO=\(repo)", "--timeout", "120",
                ])
                #expect(r.exitCode == 0 && r.stdout.contains("claimed \(pool)-"), "\(r.stdout)\n\(r.stderr)")
                #expect(r.stderr.contains("\(extra) of \(ws) is not handed in"), "\(r.stderr)")
                #expect(try await Self.inNoObject(value), "the claimer's value is in no object of the cluster")
                r = try await b([
                    "deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", "printenv \(extra); true",
                ])
                #expect(
                    r.exitCode == 0 && !r.stdout.contains(value), "the container has no value: \(r.stdout)\(r.stderr)")
                r = try await b(["pool", "remove", pool])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            }
        } catch {
            _ = try? await a(["pool", "remove", pool])
            _ = try? await E2E.kubectl(["delete", "namespace", victim, "--ignore-not-found", "--wait=false"])
            throw error
        }
        _ = try? await E2E.kubectl(["delete", "namespace", victim, "--ignore-not-found", "--wait=false"])
    }

    /// A claim of a pool's member (namespace `member`) whose latest revision a writer made name the namespace `victim`
    /// (another deployment's, holding a Secret and a ConfigMap), and one more `secret-env` variable (`files`): `up`
    /// (`claim`, the claimer's, whose environment holds that variable's `value`) is refused naming the namespace, the
    /// member is given back (its claim's Lease gone), and nothing in `victim` is made, changed or deleted; the value is
    /// in no object of the cluster.
    static func claimOfAnotherNamespace(
        _ files: [String: String], id: String, member: String, after latest: Int, victim: String, value: String,
        in t: TempDir, claim: () async throws -> ProcessResult
    ) async throws {
        var r = try await E2E.kubectl(["create", "namespace", victim])
        try #require(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.kubectl(["-n", victim, "create", "secret", "generic", "kept", "--from-literal=k=v"])
        r = try await E2E.kubectl(["-n", victim, "create", "configmap", "kept", "--from-literal=k=v"])
        var elsewhere = files
        elsewhere["spec.yml"] = Self.naming(victim, in: try #require(files["spec.yml"]))
        try await Self.plant(elsewhere, id: id, namespace: member, revision: latest + 1, host: "writer-box", in: t)
        let before = try await Self.contents(of: victim)
        #expect(before.contains { $0.hasPrefix("Secret/kept@") }, "\(before)")
        r = try await claim()
        #expect(r.exitCode == 77 && r.stderr.contains("spec.yml namespace names \(victim)"), "\(r.stdout)\n\(r.stderr)")
        #expect(try await Self.contents(of: victim) == before, "nothing in \(victim) was made, changed or deleted")
        r = try await E2E.kubectl(["-n", member, "get", "lease", "so-pool-claim", "-o", "name"])
        #expect(r.exitCode != 0, "the member was given back: \(r.stdout)")
        #expect(try await Self.inNoObject(value), "the claimer's value is in no object of the cluster")
    }

    /// Whether no Secret or ConfigMap of the cluster holds `value` (as it is, or base64 as a Secret holds it).
    static func inNoObject(_ value: String) async throws -> Bool {
        let held = try await E2E.kubectl(["get", "secrets,configmaps", "-A", "-o", "json"])
        return held.exitCode == 0 && !held.stdout.contains(Data(value.utf8).base64EncodedString())
            && !held.stdout.contains(value)
    }

    /// `spec` (a spec.yml's text) with `namespace: namespace` in place of the namespace it names.
    static func naming(_ namespace: String, in spec: String) -> String {
        spec.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("namespace:") }
            .joined(separator: "\n") + (spec.hasSuffix("\n") ? "" : "\n") + "namespace: \(namespace)\n"
    }

    /// What `namespace` holds, object by object (kind, name and resourceVersion): equal before and after when
    /// nothing in it was made, changed or deleted.
    static func contents(of namespace: String) async throws -> [String] {
        let r = try await E2E.kubectl([
            "-n", namespace, "get",
            "secrets,configmaps,leases,pods,deployments,services,serviceaccounts,roles,rolebindings,networkpolicies,"
                + "persistentvolumeclaims",
            "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}@{.metadata.resourceVersion}{\"\\n\"}{end}",
        ])
        let ns = try await E2E.kubectl(["get", "namespace", namespace, "-o", "jsonpath={.metadata.resourceVersion}"])
        return ["Namespace@\(ns.stdout)"] + r.stdout.split(separator: "\n").map(String.init).sorted()
    }

    /// `spec` (a spec.yml's text) whose `secret-env` names `name` too, in the form it has (flow or block list).
    static func addingSecretEnv(_ name: String, to spec: String) -> String {
        var lines = spec.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let at = lines.firstIndex(where: { $0.hasPrefix("secret-env:") }) else {
            return spec + (spec.hasSuffix("\n") ? "" : "\n") + "secret-env: [\(name)]\n"
        }
        if lines[at].contains("[]") {
            lines[at] = lines[at].replacingOccurrences(of: "[]", with: "[\(name)]")
        } else if let open = lines[at].firstIndex(of: "[") {
            lines[at].insert(contentsOf: "\(name), ", at: lines[at].index(after: open))
        } else {
            let item = at + 1 < lines.count ? lines[at + 1] : "  - x"
            lines.insert(String(item.prefix { $0 == " " }) + "- \(name)", at: at + 1)
        }
        return lines.joined(separator: "\n")
    }

    /// The `deployment-id` a deployment.yml's text names.
    static func id(in deploymentYML: String) -> String? {
        deploymentYML.split(separator: "\n").first { $0.hasPrefix("deployment-id:") }?.split(separator: " ").last
            .map(String.init)
    }

    /// The PersistentVolumes bound to claims of `namespace`, sorted.
    static func volumes(of namespace: String) async throws -> [String] {
        let r = try await E2E.kubectl([
            "get", "pv", "-o",
            "jsonpath={range .items[?(@.spec.claimRef.namespace==\"\(namespace)\")]}{.metadata.name}{\"\\n\"}{end}",
        ])
        return r.stdout.split(separator: "\n").map(String.init).sorted()
    }

    /// `so dashboard` of `home` on a machine named `host` (its own UTS namespace), signed in, doing `action` on
    /// `namespace` as the page's button does; its answer. `started`: the server's process (the caller stops it).
    static func pageActs(
        _ action: String, on namespace: String, home: String, host: String, in t: TempDir,
        started: (Process) -> Void
    ) async throws -> (ok: Bool, message: String) {
        let token = String(repeating: "7c", count: 32)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = Self.unshared(host, ["dashboard", "--port", "0"])
        var env = Self.environment(home)
        env["SO_DASHBOARD_TOKEN"] = token
        p.environment = env
        try t.write("page.out", "")
        try t.write("page.err", "")
        p.standardOutput = FileHandle(forWritingAtPath: t.file("page.out"))
        p.standardError = FileHandle(forWritingAtPath: t.file("page.err"))
        try p.run()
        started(p)
        let session = try await PageSession.signIn(token, in: t)
        let base = session.base
        func curl(_ args: [String]) async throws -> String { try await session.curl(args) }
        var html = ""
        for _ in 0..<100 {
            html = try await curl(["\(base)/d/\(namespace)"])
            if html.contains("value=\"\(action)\"") { break }
            try await Task.sleep(for: .milliseconds(300))
        }
        let csrf = try #require(
            html.range(of: #"name="csrf" value="([0-9a-f]+)""#, options: .regularExpression).map {
                String(html[$0].dropFirst(#"name="csrf" value=""#.count).dropLast())
            }, "the page offers no \(action) on \(namespace):\n\(html.prefix(2000))")
        let answer = try await curl(
            ["-H", "Accept: application/json"]
                + ["csrf=\(csrf)", "namespace=\(namespace)", "action=\(action)"].flatMap { ["--data-urlencode", $0] }
                + ["\(base)/actions"])
        let json = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
        return (json?["ok"] as? Bool ?? false, json?["message"] as? String ?? answer)
    }
}
