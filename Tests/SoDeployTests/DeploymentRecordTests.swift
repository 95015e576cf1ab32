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

/// The deployment's record in the cluster (`RecordStore`, `RecordStep`, `RecordAction`): written by start under the
/// Lease, read back by any machine, never holding a secret value.
@Suite struct DeploymentRecordTests {
    static func store(_ c: ClusterHarness) -> RecordStore {
        RecordStore(client: c.cluster, namespace: c.id, deployment: c.id)
    }

    static func start(_ c: ClusterHarness, dir: String = "dep", force: Bool = false, history: Int? = nil) async throws {
        var req = StartRequest(directory: dir, cluster: c.options, wait: true, timeout: 30, progress: .plain)
        req.force = force
        req.history = history
        try await StartAction(c.ctx).run(req)
    }

    /// Every revision's files, decoded from the cluster, as one text (for "no secret in it" checks).
    static func everything(_ c: ClusterHarness) async throws -> String {
        var out = ""
        for h in try await store(c).heads() {
            for f in try await store(c).read(h).files { out += f.path + "\n" + String(decoding: f.data, as: UTF8.self) }
        }
        return out
    }

    @Test func sha256MatchesFIPSVectors() {
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func gzipRoundTripsAndRefusesDamage() throws {
        let text = Data(String(repeating: "spec: value\n", count: 500).utf8)
        let packed = try Gzip.compress(text)
        #expect(packed.count < text.count / 5)
        #expect(try Gzip.decompress(packed, limit: 1 << 20) == text)
        var flipped = packed
        flipped[packed.count / 2] ^= 0x5a
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(flipped, limit: 1 << 20) }
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(packed.prefix(packed.count - 6), limit: 1 << 20) }
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(packed, limit: 100) }
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(Data("not gzip".utf8), limit: 100) }
    }

    @Test func aStartRecordsTheDirectoryWithoutAnySecretValue() async throws {
        let creds = try TempDir()
        defer { creds.cleanup() }
        try creds.write("creds.env", "API_KEY=credential-value-4242\n")
        let c = try await ClusterHarness(
            config: ["SESSION=$generate:hex:16$"],
            appendToSpec: "secret-env: [AGENT_TOKEN]\ncredentials-files:\n  - \(creds.file("creds.env"))\n",
            environment: ["AGENT_TOKEN": "tok-from-the-environment-77"])
        defer { c.h.tmp.cleanup() }
        // laconic-so appended credentials' values to config.env: the record leaves them out.
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "API_KEY=credential-value-4242\n")
        try await Self.start(c)
        let heads = try await Self.store(c).heads()
        #expect(heads.map(\.revision) == [1])
        let head = try #require(heads.first)
        #expect(head.writer == .init(user: "fake-user", host: "localhost"))
        #expect(head.verb == "start" && head.result == "started" && head.parent == nil)
        let record = try await Self.store(c).read(head)
        #expect(record.files.map(\.path).contains("spec.yml"))
        #expect(record.files.map(\.path).contains("deployment.yml"))
        #expect(record.files.contains { $0.path.hasPrefix("compose/") })
        #expect(
            !record.files.contains { $0.path.hasPrefix("data") || $0.path.hasSuffix(".bak") || $0.path.hasPrefix(".") })
        let generated = try #require(
            c.cluster.object("Secret", DeploymentNames.generatedSecrets(c.id), namespace: c.id)?.at("data", "SESSION")?
                .string.flatMap { Data(base64Encoded: $0) })
        let all = try await Self.everything(c)
        for secret in [
            String(decoding: generated, as: UTF8.self), "tok-from-the-environment-77", "credential-value-4242",
        ] {
            // A Bool, not the expression: a failure must not print the record's text with the value in it.
            let leaked = all.contains(secret)
            #expect(!leaked, "a secret value is in the record")
        }
        // The names are there (the spec says them), and config.env's other values.
        #expect(all.contains("AGENT_TOKEN") && all.contains("GREETING"))
        // The directory remembers the revision it is in step with.
        #expect(RecordFiles.step(in: c.h.path("dep"), fs: c.h.fs)?.revision == 1)
    }

    @Test func aStartThatChangesNothingWritesNothing() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        let before = c.cluster.calls.count
        try await Self.start(c)
        let again = c.cluster.calls[before...]
        #expect(!again.contains { $0.hasPrefix("create Secret") || $0.hasPrefix("patch Secret") }, "\(again)")
        #expect(try await Self.store(c).heads().map(\.revision) == [1])
    }

    @Test func aChangedDirectoryBecomesTheNextRevisionNamingWhatChanged() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "NEW_SETTING=on\n")
        try await Self.start(c)
        let heads = try await Self.store(c).heads()
        #expect(heads.map(\.revision) == [1, 2])
        #expect(heads[1].parent == 1 && heads[1].changed == "~config.env" && heads[1].result == "started")
        let files = try await Self.store(c).read(heads[1]).files
        #expect(
            String(decoding: try #require(files.first { $0.path == "config.env" }).data, as: UTF8.self).contains(
                "NEW_SETTING=on"))
    }

    /// Two directories of one deployment: the one that fell behind is refused before anything is applied, with
    /// who wrote what; `pull` brings it in step; `--force` writes it as the next revision.
    /// The stale error's way out names the directory as the user would: `--name N` for one `so up` made.
    @Test func theWayOutNamesTheDirectoryAsTheUserDoes() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        let named = try c.ctx.namedDeployment("ws-1")
        #expect(RecordStep.target(c.ctx, named) == "--name ws-1")
        #expect(RecordStep.target(c.ctx, c.h.path("dep")) == "--dir \(c.h.path("dep"))")
        #expect(RecordStep.target(c.ctx, Path.join(Path.dirname(named), "Not_A_Name")).hasPrefix("--dir "))
    }

    @Test func aStaleDirectoryIsRefusedThenPulledOrForced() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        try FileManager.default.copyItem(atPath: c.h.path("dep"), toPath: c.h.path("other"))
        try c.h.tmp.write("other/config.env", try c.h.read("other/config.env") + "FROM_OTHER=1\n")
        try await Self.start(c, dir: "other")
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "FROM_DEP=1\n")
        let before = c.cluster.calls.count
        await #expect {
            try await Self.start(c)
        } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            let hint = (e as? SoError)?.hint ?? ""
            return m.contains(
                "is out of step with \(c.id)'s record in the cluster: revision 2 was written by fake-user on localhost")
                && m.contains("this directory was last in step with revision 1") && hint.contains("--dir ")
                && hint.contains("pull") && hint.contains("start --force")
        }
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply") || $0.hasPrefix("create Secret") })
        // --force: this directory is revision 3.
        try await Self.start(c, force: true)
        #expect(try await Self.store(c).heads().map(\.revision) == [1, 2, 3])
        // The other directory pulls it: its config.env is dep's now (its own kept as .bak).
        let pulled = try await RecordAction(c.ctx).pull(directory: "other", cluster: c.options)
        #expect(pulled.revision == 3 && pulled.changed == ["config.env"])
        #expect(try c.h.read("other/config.env").contains("FROM_DEP=1"))
        #expect(try c.h.read("other/config.env.bak").contains("FROM_OTHER=1"))
        let before2 = c.cluster.calls.count
        try await Self.start(c, dir: "other")
        #expect(!c.cluster.calls[before2...].contains { $0.hasPrefix("create Secret") })
    }

    @Test func aRevisionLeftApplyingIsNamedAndTakenOver() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        // As a start killed after writing its revision leaves it.
        c.cluster.update("Secret", RecordStore.name(c.id, revision: 1), namespace: c.id) { json in
            guard case .object(var o) = json, case .object(var meta)? = o["metadata"],
                case .object(var notes)? = meta["annotations"]
            else { return }
            notes[RecordStore.Key.result] = .string(RecordHead.applying)
            meta["annotations"] = .object(notes)
            o["metadata"] = .object(meta)
            json = .object(o)
        }
        #expect(try await Self.store(c).heads().first?.shownResult.hasPrefix("interrupted") == true)
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "AFTER=1\n")
        try await Self.start(c)
        #expect(
            c.ctx.diagnostics.all.contains {
                $0.message.contains("revision 1 of \(c.id)'s record (start by fake-user on localhost")
                    && $0.message.contains("did not finish")
            })
        #expect(try await Self.store(c).heads().map(\.result) == [RecordHead.applying, "started"])
    }

    @Test func aDamagedRecordIsAnErrorNamingItsObject() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        let name = RecordStore.name(c.id, revision: 1)
        c.cluster.update("Secret", name, namespace: c.id) { json in
            guard case .object(var o) = json else { return }
            o["data"] = .object(["record": .string(Data("edited by hand".utf8).base64EncodedString())])
            json = .object(o)
        }
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "AFTER=1\n")
        await #expect {
            try await Self.start(c)
        } throws: { e in
            (e as? SoError)?.message
                == "the deployment record Secret \(c.id)/\(name) is damaged: its data is not a record: it is not valid gzip"
        }
        // A head whose revision label is not a number.
        c.cluster.update("Secret", name, namespace: c.id) { json in
            guard case .object(var o) = json, case .object(var meta)? = o["metadata"],
                case .object(var labels)? = meta["labels"]
            else { return }
            labels[RecordStore.Key.revision] = .string("one")
            meta["labels"] = .object(labels)
            o["metadata"] = .object(meta)
            json = .object(o)
        }
        await #expect {
            _ = try await RecordAction(c.ctx).history(directory: "dep", cluster: c.options)
        } throws: { e in
            (e as? SoError)?.message.contains("Secret \(c.id)/\(name) is damaged: its revision label") == true
        }
    }

    /// Pseudo-random bytes (they do not compress), the same every run.
    static func noise(_ count: Int, seed: UInt64) -> Data {
        var x = seed
        var out = Data(capacity: count)
        for _ in 0..<count {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out.append(UInt8(truncatingIfNeeded: x >> 33))
        }
        return out
    }

    @Test func aLargeRecordIsSplitAndReadBackWhole() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        let big = Self.noise(2_000_000, seed: 7)
        try big.write(to: URL(fileURLWithPath: c.h.path("dep/config/example/blob.bin")))
        try await Self.start(c)
        let head = try #require(try await Self.store(c).heads().first)
        #expect(head.chunks == 3)
        #expect(c.cluster.object("Secret", RecordStore.name(c.id, revision: 1) + ".3", namespace: c.id) != nil)
        let files = try await Self.store(c).read(head).files
        #expect(files.first { $0.path == "config/example/blob.bin" }?.data == big)
    }

    @Test func aRecordTooLargeIsRefusedNamingItsLargestFilesAndLeavesNothing() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try Self.noise(8_000_000, seed: 3).write(to: URL(fileURLWithPath: c.h.path("dep/config/example/huge.bin")))
        await #expect {
            try await Self.start(c)
        } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.contains("more than the 7.0 MiB the cluster keeps for one revision")
                && m.contains("the largest files: config/example/huge.bin (7.6 MiB)")
        }
        #expect(c.cluster.all.filter { $0.0.name.hasPrefix("so.record.") }.isEmpty)
        #expect(!c.cluster.calls.contains { $0.hasPrefix("apply Deployment") })
    }

    @Test func twoWritersOfOneRevisionCannotBothWin() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        let record = DeploymentRecord(
            deployment: c.id, revision: 2, parent: 1, writer: .init(user: "a", host: "h"), time: Date(), verb: "start",
            files: [.init(path: "spec.yml", data: Self.noise(1_000_000, seed: 1))])
        _ = try await Self.store(c).write(record, changed: ["~spec.yml"])
        var other = record
        other.writer = .init(user: "b", host: "h")
        await #expect {
            _ = try await Self.store(c).write(other, changed: ["~spec.yml"])
        } throws: { e in
            (e as? SoError)?.message == "another writer made revision 2 of this deployment's record first"
        }
        #expect(try await Self.store(c).heads().last?.writer.user == "a")
        #expect(try await Self.store(c).read(try #require(try await Self.store(c).heads().last)).files == record.files)
    }

    /// A writer killed between a revision's parts and its head left parts alone: the next writer takes their place.
    @Test func partsLeftWithoutAHeadAreTakenOver() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        try c.cluster.seed(
            KubeObject(
                .secret, name: RecordStore.name(c.id, revision: 2) + ".2", namespace: c.id,
                labels: [(RecordStore.Key.of, c.id), (RecordStore.Key.revision, "2"), (RecordStore.Key.part, "chunk")],
                body: [("data", .map([("record", .string("AAAA"))]))]))
        try Self.noise(1_500_000, seed: 9).write(to: URL(fileURLWithPath: c.h.path("dep/config/example/blob.bin")))
        try await Self.start(c)
        let head = try #require(try await Self.store(c).heads().last)
        #expect(head.revision == 2 && head.chunks == 2)
        #expect(try await Self.store(c).read(head).files.contains { $0.path == "config/example/blob.bin" })
    }

    @Test func theClusterKeepsTheLastRevisionsAsAsked() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        for i in 1...4 {
            try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "STEP\(i)=\(i)\n")
            try await Self.start(c, history: 2)
        }
        #expect(try await Self.store(c).heads().map(\.revision) == [3, 4])
    }

    @Test func recordPathsFromTheClusterAreCheckedBeforeAnythingIsWritten() throws {
        for bad in [
            "../x", "/etc/passwd", "compose/../../x", "data/x", "kubeconfig.yml", ".so-record", "compose/.git/config",
            "compose/a\u{1b}b", "", "compose//x", "config/x.bak", "notes.txt", "compose\\x",
        ] {
            #expect(!RecordFiles.isSafe(bad), "\(bad)")
        }
        for good in ["spec.yml", "compose/docker-compose-a.yml", "config/x/y.txt", "configmaps/m/k"] {
            #expect(RecordFiles.isSafe(good), "\(good)")
        }
        let t = try TempDir()
        defer { t.cleanup() }
        let record = DeploymentRecord(
            deployment: "d", revision: 1, parent: nil, writer: .init(user: "u", host: "h"), time: Date(), verb: "start",
            files: [.init(path: "spec.yml", data: Data()), .init(path: "../escaped", data: Data("x".utf8))])
        #expect(throws: SoError.self) { try RecordFiles.write(record, to: t.file("d"), fs: LocalFileSystem()) }
        #expect(!LocalFileSystem().exists(t.file("d")) && !LocalFileSystem().exists(t.file("escaped")))
    }

    /// Pulled over a directory whose `config` is a symlink to elsewhere: refused, and nothing is written there.
    @Test func aRecordIsNeverWrittenThroughASymlinkedFolder() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let fs = LocalFileSystem()
        try fs.createDirectory(t.file("elsewhere"))
        try fs.createDirectory(t.file("d"))
        try t.write("d/spec.yml", "old\n")
        #expect(symlink(t.file("elsewhere"), t.file("d/config")) == 0)
        let record = DeploymentRecord(
            deployment: "d", revision: 1, parent: nil, writer: .init(user: "u", host: "h"), time: Date(), verb: "start",
            files: [
                .init(path: "spec.yml", data: Data("new\n".utf8)), .init(path: "config/x/y.txt", data: Data("x".utf8)),
            ])
        #expect(throws: SoError.self) { try RecordFiles.write(record, to: t.file("d"), fs: fs) }
        #expect(try fs.walk(t.file("elsewhere")).isEmpty)
        #expect(try t.read("d/spec.yml") == "old\n")
    }

    /// `--name N` on a machine without `$SO_HOME/deployments/N`: the directory comes from the record.
    @Test func aNamedDeploymentIsMadeFromTheRecordOnAnotherMachine() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        var other = c.ctx
        other.environment["SO_HOME"] = c.h.path("home-b")
        let dir = try #require(try await RecordAction(other).materialize(name: c.id, client: c.cluster))
        #expect(dir == c.h.path("home-b/deployments/\(c.id)"))
        for f in ["spec.yml", "deployment.yml", "config.env", "stack.yml"] {
            #expect(try c.h.read("home-b/deployments/\(c.id)/\(f)") == (try c.h.read("dep/\(f)")), "\(f)")
        }
        #expect(RecordFiles.step(in: dir, fs: c.h.fs)?.revision == 1)
        #expect(
            c.h.console.stderr.contains(
                "made \(dir) from the cluster's record of \(c.id) (revision 1, start by fake-user"))
        // Its start changes nothing and writes nothing: the same deployment, from another directory.
        let before = c.cluster.calls.count
        try await StartAction(other).run(
            StartRequest(directory: dir, cluster: c.options, wait: true, timeout: 30, progress: .plain))
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("create Secret") })
        // Nothing recorded under a name: nil, not an error, for down's way.
        #expect(try await RecordAction(other).materialize(name: "nothing-here", client: c.cluster) == nil)
    }

    @Test func rollbackStartsAnOldRevisionAsTheNextOne() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c)
        let first = try c.h.read("dep/config.env")
        try c.h.tmp.write("dep/config.env", first + "SECOND=2\n")
        try await Self.start(c)
        let req = StartRequest(directory: "dep", cluster: c.options, wait: true, timeout: 30, progress: .plain)
        await #expect {
            _ = try await RecordAction(c.ctx).rollback(req, to: 9)
        } throws: { e in
            (e as? SoError)?.message == "revision 9 of \(c.id) is not in the cluster (it keeps 1, 2)"
        }
        let (from, to, _) = try await RecordAction(c.ctx).rollback(req, to: nil)
        #expect(from == 2 && to == 1)
        #expect(try c.h.read("dep/config.env") == first)
        let heads = try await Self.store(c).heads()
        #expect(heads.map(\.revision) == [1, 2, 3])
        #expect(heads[2].verb == "rollback" && heads[2].parent == 2 && heads[2].digest == heads[0].digest)
    }

    /// RBAC that lets a start write the workloads but not the record: refused before anything is applied.
    @Test func aRecordThatMayNotBeWrittenStopsTheStartBeforeAnyApply() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        c.cluster.failures["create Secret \(c.id)/so.record."] = SoError(
            "cannot create Secret \(c.id)/so.record.\(c.id).v1: user may not create secrets in namespace \(c.id) (Forbidden)",
            hint: "grant create on secrets")
        await #expect {
            try await Self.start(c)
        } throws: { e in
            (e as? SoError)?.message.contains("may not create secrets") == true
        }
        #expect(!c.cluster.calls.contains { $0.hasPrefix("apply") }, "\(c.cluster.calls)")
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
    }
}
