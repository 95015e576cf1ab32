import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// The record among teammates: what a directory written from another machine's revision may take from this one
/// (`RecordFiles.Step.copies`, `RecordGate` on `pull`), a claimed workspace found by its name, and the
/// verbs that write a revision without a start (a claim, `deploy create --update`).
@Suite struct RecordTeamTests {
    static func store(_ c: ClusterHarness) -> RecordStore {
        RecordStore(client: c.cluster, namespace: c.id, deployment: c.id)
    }

    /// The value the cluster holds for `key` in the generated-secrets Secret.
    static func held(_ c: ClusterHarness, _ key: String) -> String? {
        c.cluster.object("Secret", DeploymentNames.generatedSecrets(c.id), namespace: c.id)?.at("data", key)?.string
            .flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// A teammate's context: another home and host, their own environment.
    static func teammate(_ c: ClusterHarness, _ env: [String: String] = [:]) -> SoContext {
        var other = c.ctx
        other.environment["SO_HOME"] = c.h.path("home-b")
        other.hostName = "laptop-b"
        for (k, v) in env { other.environment[k] = v }
        return other
    }

    static func start(_ ctx: SoContext, _ dir: String, _ c: ClusterHarness, copy: Bool = false) async throws {
        var req = StartRequest(directory: dir, cluster: c.options, wait: true, timeout: 30, progress: .plain)
        req.copySecretEnv = copy
        try await StartAction(ctx).run(req)
    }

    /// A directory made from the record copies none of the variables it names from the environment of the machine
    /// it was made on (a teammate's spec could name that machine's keys); `--copy-secret-env` is the way to.
    @Test func aDirectoryFromTheRecordCopiesNoneOfThisMachinesSecretEnv() async throws {
        let c = try await ClusterHarness(
            appendToSpec: "secret-env: [AGENT_TOKEN]\n", environment: ["AGENT_TOKEN": "writers-value-1"])
        defer { c.h.tmp.cleanup() }
        try await Self.start(c.ctx, "dep", c)
        #expect(Self.held(c, "AGENT_TOKEN") == "writers-value-1")
        // The directory made here copies what its files name.
        #expect(RecordFiles.step(in: c.h.path("dep"), fs: c.h.fs)?.copies == nil)
        let other = Self.teammate(c, ["AGENT_TOKEN": "readers-value-2"])
        let dir = try #require(try await RecordAction(other).materialize(name: c.id, client: c.cluster))
        #expect(RecordFiles.step(in: dir, fs: c.h.fs)?.copies == [])
        try await Self.start(other, dir, c)
        #expect(Self.held(c, "AGENT_TOKEN") == "writers-value-1", "the cluster's value is kept")
        let said = try #require(other.diagnostics.all.first { $0.message.hasPrefix("AGENT_TOKEN is not copied") })
        #expect(said.message.contains("from your environment: \(dir) was written from the cluster's record"))
        #expect(said.hint?.contains("start --copy-secret-env") == true)
        // Said, and then done.
        try await Self.start(other, dir, c, copy: true)
        #expect(Self.held(c, "AGENT_TOKEN") == "readers-value-2")
        #expect(RecordFiles.step(in: dir, fs: c.h.fs)?.copies == nil)
        #expect(try await Self.store(c).heads().map(\.revision) == [1], "the same files: no revision")
    }

    /// `pull` of a teammate's revision: what this machine copied before is kept (a variable the revision adds is
    /// not copied from here), and a revision that would read this machine's files is refused before anything is
    /// written.
    @Test func aPullOfAnotherMachinesRevisionIsCheckedAndKeepsWhatThisMachineCopies() async throws {
        let c = try await ClusterHarness(
            appendToSpec: "secret-env: [AGENT_TOKEN]\n", environment: ["AGENT_TOKEN": "t", "EXTRA_KEY": "mine"])
        defer { c.h.tmp.cleanup() }
        try await Self.start(c.ctx, "dep", c)
        let other = Self.teammate(c)
        let theirs = try #require(try await RecordAction(other).materialize(name: c.id, client: c.cluster))
        let spec = Path.join(theirs, "spec.yml")
        try c.h.fs.write(
            Data(
                try String(contentsOfFile: spec, encoding: .utf8).replacingOccurrences(
                    of: "secret-env: [AGENT_TOKEN]", with: "secret-env: [AGENT_TOKEN, EXTRA_KEY]"
                ).utf8), to: spec)
        try await Self.start(other, theirs, c)
        #expect(try await Self.store(c).heads().last?.writer.host == "laptop-b")
        let pulled = try await RecordAction(c.ctx).pull(directory: "dep", cluster: c.options)
        #expect(pulled.revision == 2 && pulled.changed == ["spec.yml"])
        #expect(RecordFiles.step(in: c.h.path("dep"), fs: c.h.fs)?.copies == ["AGENT_TOKEN"])
        let model = try DeploymentLoader.load(c.h.path("dep"), fs: c.h.fs, diagnostics: DiagnosticSink())
        #expect(RecordTrust.notCopied(model, fs: c.h.fs) == ["EXTRA_KEY"])
        // The teammate's next revision names a file of this machine: refused, and nothing of it written here.
        let own = c.h.path("home/.ssh/id_ed25519")
        try c.h.tmp.write("home/.ssh/id_ed25519", "KEY\n")
        try c.h.fs.write(
            Data((try String(contentsOfFile: spec, encoding: .utf8) + "ca-certificates: [\(own)]\n").utf8), to: spec)
        try await Self.start(other, theirs, c)
        let before = try c.h.read("dep/spec.yml")
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(c.ctx).pull(directory: "dep", cluster: c.options)
        }
        #expect(
            e?.message.hasPrefix(
                "revision 3 of \(c.id) (start by fake-user on laptop-b, as it says) is refused: spec.yml ca-certificates "
                    + "reads \(own) of this machine; nothing was written to \(c.h.path("dep"))") == true,
            "\(e?.message ?? "")")
        #expect(e?.message.contains("nothing was written to \(c.h.path("dep"))") == true)
        #expect(try c.h.read("dep/spec.yml") == before)
        #expect(!(try c.h.fs.walk(c.h.tmp.path).contains { $0.relative.contains(".pulling") }), "no scratch left")
        // The writer's host is a label, never a credential: the same revision is refused on laptop-b too.
        var mine = c.ctx
        mine.hostName = "laptop-b"
        await #expect(throws: SoError.self) {
            _ = try await RecordAction(mine).pull(directory: "dep", cluster: c.options)
        }
        #expect(try c.h.read("dep/spec.yml") == before)
    }

    /// A workspace claimed from a pool lives in its member's namespace: `--name` finds it by the name its directory
    /// was given, and the claim is a revision of its own (who holds it since when).
    @Test func aClaimedWorkspaceIsFoundByNameAndItsClaimIsARevision() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c.ctx, "dep", c)
        let patch =
            #"{"metadata":{"annotations":{"laconic.com/deployment-dir":"/home/a/.so/deployments/ws-claimed","#
            + #""so.dev/claimed-from":"warm"}}}"#
        let patched = try await c.cluster.patch(.namespace, name: c.id, namespace: nil, mergePatch: Data(patch.utf8))
        await RecordAction(c.ctx).recordClaim(
            dir: c.h.path("dep"), namespace: patched, client: c.cluster,
            connection: ClusterConnection(contextName: "ci", server: "https://127.0.0.1:6443"))
        let heads = try await Self.store(c).heads()
        #expect(heads.map(\.revision) == [1, 2])
        #expect(heads[1].verb == "claim" && heads[1].result == "claimed" && heads[1].digest == heads[0].digest)
        #expect(heads[1].pool == "warm")
        #expect(RecordFiles.step(in: c.h.path("dep"), fs: c.h.fs)?.revision == 2)
        let other = Self.teammate(c)
        let dir = try #require(try await RecordAction(other).materialize(name: "ws-claimed", client: c.cluster))
        #expect(dir == c.h.path("home-b/deployments/ws-claimed"))
        #expect(try c.h.read("home-b/deployments/ws-claimed/deployment.yml") == (try c.h.read("dep/deployment.yml")))
        // Two machines' workspaces of one name are not guessed between.
        let twin = KubeObject(
            .namespace, name: "twin-ns", labels: [DeploymentNames.Label.managedBySo],
            annotations: [
                (DeploymentNames.directoryAnnotation, "/home/c/.so/deployments/ws-claimed"),
                (DeploymentNames.Annotation.claimedFrom, "warm"),
            ])
        _ = try await c.cluster.create(twin, fieldManager: "test")
        try? c.h.fs.removeOwnedTree(dir, owner: .labelledChild(of: Path.dirname(dir)))
        let e = await #expect(throws: SoError.self) {
            _ = try await RecordAction(other).materialize(name: "ws-claimed", client: c.cluster)
        }
        #expect(e?.message.hasPrefix("several workspaces named 'ws-claimed' were claimed from pools") == true)
    }

    /// After a revision is written, its old revisions' pruning and the Namespace's note of who wrote last go at once
    /// (a claim's `up` waits for both): the prune's look for orphaned parts is held at the fake API server until the
    /// Namespace's note arrives, which never happens while the note waits for the prune.
    @Test func aRevisionsTailPrunesAndNotesItsWriterAtOnce() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c.ctx, "dep", c)
        let patch = #"{"metadata":{"annotations":{"so.dev/claimed-from":"warm"}}}"#
        let patched = try await c.cluster.patch(.namespace, name: c.id, namespace: nil, mergePatch: Data(patch.utf8))
        let note = "patch Namespace \(c.id)"
        let before = c.cluster.calls.filter { $0 == note }.count
        let missed = HoldRanOut()
        c.cluster.beforeCallAsync = { [cluster = c.cluster] call in
            guard call.hasSuffix("\(RecordStore.Key.part)=chunk") else { return }
            let began = ContinuousClock.now
            while cluster.calls.filter({ $0 == note }).count == before {
                guard ContinuousClock.now - began < .seconds(10) else { return missed.mark() }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        await RecordAction(c.ctx).recordClaim(
            dir: c.h.path("dep"), namespace: patched, client: c.cluster,
            connection: ClusterConnection(contextName: "ci", server: "https://127.0.0.1:6443"))
        c.cluster.beforeCallAsync = nil
        #expect(!missed.ranOut, "the orphans' look waited 10 s for the Namespace's note: \(c.cluster.calls)")
        #expect(try await Self.store(c).heads().map(\.revision) == [1, 2])
        let annotations = try #require(try await c.cluster.get(.namespace, name: c.id, namespace: nil)).annotations
        #expect(annotations[RecordStore.Key.revision] == "2", "\(annotations)")
    }

    /// `deploy create --update` of a directory in step with the record writes the next revision, not started; a
    /// teammate's directory is then behind it, and the next start runs as that revision (no other write).
    @Test func anUpdateIsARevisionTheNextStartRunsAs() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        try await Self.start(c.ctx, "dep", c)
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "UPDATED=1\n")
        await RecordAction(c.ctx).recordUpdate(dir: c.h.path("dep"), cluster: c.options)
        var heads = try await Self.store(c).heads()
        try #require(heads.map(\.revision) == [1, 2], "\(c.h.console.stderr)")
        #expect(heads[1].verb == "update" && heads[1].result == "not started" && heads[1].changed == "~config.env")
        #expect(c.h.console.stdout.contains("recorded in the cluster as revision 2 of \(c.id) (not started yet"))
        let before = c.cluster.calls.count
        try await Self.start(c.ctx, "dep", c)
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("create Secret \(c.id)/so.record.") })
        heads = try await Self.store(c).heads()
        #expect(heads.map(\.revision) == [1, 2] && heads[1].result == "started")
        // Nothing changed since: no revision; no step file (never started): no cluster asked.
        let calls = c.cluster.calls.count
        await RecordAction(c.ctx).recordUpdate(dir: c.h.path("dep"), cluster: c.options)
        #expect(try await Self.store(c).heads().count == 2)
        try c.h.fs.remove(c.h.path("dep/\(RecordFiles.stepFile)"))
        let asked = c.cluster.calls.count
        await RecordAction(c.ctx).recordUpdate(dir: c.h.path("dep"), cluster: c.options)
        #expect(c.cluster.calls.count == asked && asked > calls)
    }
}

/// A hold at the fake API server that ran out (its request went without what it waited for).
private final class HoldRanOut: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var ranOut: Bool { lock.withLock { value } }
    func mark() { lock.withLock { value = true } }
}
