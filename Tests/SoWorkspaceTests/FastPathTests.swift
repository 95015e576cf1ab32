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
@testable import SoWorkspace

/// Requests that must be under way at the same moment, proven without a clock: each request of `together` waits at
/// the fake API server until every one of them has arrived (a request that only goes once another has answered never
/// arrives while that one waits: the wait runs out, and `missed` says which). `after`: a request held until a call
/// matching the other has been made (it goes beside that call, not before it). `batch`: each request it matches waits
/// until `size` of them have arrived (a batch of that many under way at once).
final class Rendezvous: @unchecked Sendable {
    private let lock = NSLock()
    private var missedValue: [String] = []
    let cluster: FakeCluster
    let together: [String]
    let after: [(held: String, until: String)]
    let batch: (matching: @Sendable (String) -> Bool, size: Int)?
    /// How long a request waits for the others (long: on a loaded machine, concurrent tasks can start seconds apart;
    /// only a regression waits it out).
    let seconds: Double

    var missed: [String] { lock.withLock { missedValue } }

    init(
        _ cluster: FakeCluster, together: [String], after: [(held: String, until: String)] = [],
        batch: (matching: @Sendable (String) -> Bool, size: Int)? = nil, seconds: Double = 30
    ) {
        self.cluster = cluster
        self.together = together
        self.after = after
        self.batch = batch
        self.seconds = seconds
    }

    func arrive(_ call: String) async {
        var waitFor: [String] = []
        if together.contains(where: { call.hasPrefix($0) }) { waitFor = together }
        for rule in after where call.hasPrefix(rule.held) { waitFor.append(rule.until) }
        let inBatch = batch.map { $0.matching(call) } ?? false
        guard !waitFor.isEmpty || inBatch else { return }
        let arrived = { [cluster, batch] in
            waitFor.allSatisfy { w in cluster.calls.contains { $0.hasPrefix(w) || $0.contains(w) } }
                && (!inBatch || cluster.calls.filter { batch?.matching($0) == true }.count >= batch?.size ?? 0)
        }
        let began = ContinuousClock.now
        while !arrived() {
            guard ContinuousClock.now - began < .seconds(seconds) else {
                let what = inBatch ? "\(waitFor) and \(batch?.size ?? 0) of its batch" : "\(waitFor)"
                lock.withLock { missedValue.append("\(call) waited \(Int(seconds)) s for \(what)") }
                return
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// The requests a warm claim and a cold `up` make before the user's checkout is in, in order (issue 66): what each
/// waits for, and what goes beside the hand-over or the apply. Their number and order, never their time: a change that
/// puts another round trip on either path fails here.
@Suite(.serialized) struct FastPathTests {
    /// A claim from a remote (`so up --name`, no checkout): the pools and the workspaces asked for at once, the chosen
    /// pool's member's pods, the claim's Lease, then the hand-over into the member. The workspace's name on its
    /// Namespace and the claim's revision of the record go beside the hand-over; the claimer's credentials (the
    /// Secret's values) too, and the container's file of them goes in the hand-over's own exec (one exec, not two).
    @Test func aClaimWaitsForTwoListingsAndItsLeaseBeforeTheHandOver() async throws {
        let c = try await CarryHarness()
        let origin = try await c.origin()
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        let (ns, id) = (member.listing.namespace, member.listing.id)
        let cluster = c.w.cluster
        // The hand-over's exec (the credentials in it) through the API server: in the fake's log with the rest.
        cluster.execOutcomes = [ExecOutcome(exitCode: 0)]
        let pools = "list Secret so-pools \(PoolStore.label)"
        let workspaces = "list Namespace \(DeploymentNames.Label.managedBySoSelector)"
        let handOver = "/tmp/so-clone-done"
        let meet = Rendezvous(
            cluster, together: [pools, workspaces],
            after: [
                ("patch Namespace \(ns)", handOver), ("create SelfSubjectReview", handOver),
                // The agent's image looked for among the nodes' images (AgentImage) goes beside the claim, which
                // never waits for it: held until the hand-over began.
                ("list Node", handOver),
            ])
        cluster.beforeCallAsync = { call in await meet.arrive(call) }
        let req = c.remoteUp("remote-ws", repo: "file://\(origin)")
        let before = cluster.calls.count
        let r = try await UpAction(c.w.ctx).run(req)
        cluster.beforeCallAsync = nil
        #expect(r.note == "claimed from pool warm", "\(r)")
        #expect(meet.missed.isEmpty, "\(meet.missed)")
        // (less the agent's image looked for among the nodes' images: beside the claim, held above)
        let calls = Array(cluster.calls[before...]).filter { $0 != "list Node" }.map {
            $0.hasPrefix("exec ") ? Self.execName($0) : $0
        }
        let lease = try #require(calls.firstIndex(of: "create Lease \(ns)/so-pool-claim"), "\(calls)")
        let exec = try #require(calls.firstIndex(of: "exec hand-over"), "\(calls)")
        // Before the Lease: two round trips (the pools beside the workspaces, then the member's pods).
        #expect(Set(calls[..<2]) == [pools, workspaces], "\(calls)")
        #expect(Array(calls[2..<lease]) == ["list Pod \(ns) app=\(id)"], "\(calls)")
        // Between the Lease and the hand-over: only the credentials' Secret, which goes beside it, and the Namespace's
        // patch, held until the hand-over began (`meet`: it goes beside it too).
        let beside: Set<String> = ["patch Secret \(ns)/\(id)-generated-secrets", "patch Namespace \(ns)"]
        #expect(calls[(lease + 1)..<exec].allSatisfy(beside.contains), "\(calls)")
        // Every request of the claim, once: the Namespace named, the revision written (its writer asked, the
        // revisions listed, their orphans looked for, the Namespace's note of the writer).
        #expect(
            calls.sorted()
                == [
                    "create Lease \(ns)/so-pool-claim", "create Secret \(ns)/so.record.\(id).v2",
                    "create SelfSubjectReview ", "exec hand-over",
                    "list Pod \(ns) app=\(id)",
                    "list Secret \(ns) \(RecordStore.Key.of)=\(id),\(RecordStore.Key.part)=chunk",
                    "list Secret \(ns) \(RecordStore.Key.of)=\(id),\(RecordStore.Key.part)=head", pools, workspaces,
                    "patch Namespace \(ns)", "patch Namespace \(ns)", "patch Secret \(ns)/\(id)-generated-secrets",
                ].sorted(), "\(calls)")
    }

    /// A claim reads the claimed workspace's files once they are its: the hand-over opens them, and the claim's
    /// revision of the record is written from that deployment beside the hand-over (where the record loaded a copy of
    /// its own), and is in the cluster when `up` returns.
    @Test func aClaimsRevisionIsWrittenFromTheDeploymentTheHandOverOpened() async throws {
        var c = try await CarryHarness()
        let origin = try await c.origin()
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        c.w.cluster.execOutcomes = [ExecOutcome(exitCode: 0)]
        let reads = CountedReads(base: c.w.ctx.fs)
        c.w.ctx.fs = reads
        let req = c.remoteUp("counted-ws", repo: "file://\(origin)")
        let r = try await UpAction(c.w.ctx).run(req)
        #expect(r.note == "claimed from pool warm", "\(r)")
        let head = try #require(
            try await RecordStore(
                client: c.w.cluster, namespace: member.listing.namespace, deployment: member.listing.id
            )
            .heads().last)
        #expect(head.verb == "claim" && head.result == "claimed", "\(head)")
        // The compose file is read by each load of the deployment and by the record's copy of the files: the hand-over's
        // load and the revision's files, nothing more.
        let compose = Path.join(try c.w.ctx.namedDeployment("counted-ws"), "compose/docker-compose-agent-workspace.yml")
        #expect(reads.count(compose) == 2, "\(reads.counts)")
    }

    /// The pool is chosen against this up's stack read once, while the pools are asked for: the pools' list is held
    /// at the API server until the stack's files were read (a choice that reads them only once the list answered
    /// never does), and each pool of the stack is judged against that one reading (where each read it again).
    @Test func aPoolIsChosenAgainstTheStackReadOnceWhileThePoolsAreAskedFor() async throws {
        var w = try WorkspaceHarness()
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("layout/\(d)"))
        }
        let reads = CountedReads(base: LocalFileSystem(currentDirectory: w.h.path("layout")))
        w.ctx.fs = reads
        var debug = PoolRecord(name: "a-debug", stack: "./stacks/agent-workspace", size: 0)
        debug.config = ["LOG_LEVEL=debug"]
        _ = try await PoolAction(w.ctx).create(debug, cluster: w.clusterOptions)
        _ = try await PoolAction(w.ctx).create(
            PoolRecord(name: "b-plain", stack: "./stacks/agent-workspace", size: 0), cluster: w.clusterOptions)
        let composeFile: @Sendable ([String: Int]) -> Int = { counts in
            counts.filter { $0.key.hasSuffix("compose/docker-compose-agent-workspace.yml") }.values.reduce(0, +)
        }
        let before = composeFile(reads.counts)
        let readWhileHeld = CountedReads(base: reads)  // its count of "held": the pools' list released after the read
        w.cluster.beforeCallAsync = { call in
            guard call.hasPrefix("list Secret so-pools") else { return }
            let began = ContinuousClock.now
            while composeFile(reads.counts) == before, ContinuousClock.now - began < .seconds(10) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            if composeFile(reads.counts) > before { _ = try? readWhileHeld.readData("held") }
        }
        var req = UpRequest(stack: "./stacks/agent-workspace")
        req.cluster = w.clusterOptions
        let choice = try await PoolClaim(ctx: w.ctx).choosing(req)
        w.cluster.beforeCallAsync = nil
        #expect(choice.pool?.name == "b-plain" && choice.passedOver.count == 1, "\(choice)")
        #expect(readWhileHeld.count("held") == 1, "the stack was read only once the pools' list answered")
        #expect(composeFile(reads.counts) - before == 1, "\(reads.counts)")
    }

    /// A cold `up` of the workspace `ws` (no pool, not waited for), each request through `meet`.
    static func coldUp(_ w: WorkspaceHarness, _ meet: Rendezvous) async throws {
        w.cluster.beforeCallAsync = { call in await meet.arrive(call) }
        var req = UpRequest(stack: "agent-workspace")
        req.name = "ws"
        req.noPool = true
        req.cluster = w.clusterOptions
        req.wait = false
        req.progress = .plain
        _ = try await UpAction(w.ctx).run(req)
        w.cluster.beforeCallAsync = nil
    }

    /// A cold `up` (no pool): the namespace and the Lease, the record's first revision (its writer asked beside the
    /// directory's files), then the apply. The Namespace's note of who wrote last goes beside the apply.
    @Test func aColdUpWritesItsRevisionThenApplies() async throws {
        let w = try WorkspaceHarness()
        let cluster = w.cluster
        // The writer is asked beside the cluster's DNS; the Namespace's note of the writer waits for the apply.
        let meet = Rendezvous(
            cluster, together: ["create SelfSubjectReview", "get Service kube-system/kube-dns"],
            after: [("patch Namespace ws", "apply ")])
        try await Self.coldUp(w, meet)
        #expect(meet.missed.isEmpty, "\(meet.missed)")
        // (less the agent's image looked for among the nodes' images: AgentImage, beside the plan, awaited before the
        // directory is made)
        let calls = cluster.calls.filter { $0 != "list Node" }
        let apply = try #require(calls.firstIndex { $0.hasPrefix("apply ") }, "\(calls)")
        let id = try #require(cluster.object("Namespace", "ws")?.labels["app"])
        // The Namespace, then the Lease and the writer (asked as the namespace was made), the cluster's DNS, then
        // the revision; the Namespace's patch is logged here but held until the apply began.
        let review = "create SelfSubjectReview "
        #expect(
            Array(calls[..<apply].filter { $0 != review }.prefix(2)) == [
                "create Namespace ws", "create Lease ws/so-deployment-lock",
            ], "\(calls)")
        #expect(calls.first == "create Namespace ws", "\(calls)")
        #expect(
            Array(calls[1..<apply]).sorted() == [
                "create Lease ws/so-deployment-lock", "create Secret ws/so.record.\(id).v1", review,
                "get DaemonSet kube-system/node-local-dns", "get Service kube-system/kube-dns",
                "list EndpointSlice kube-system kubernetes.io/service-name=kube-dns", "patch Namespace ws",
            ], "\(calls)")
        let revision = try #require(calls.firstIndex(of: "create Secret ws/so.record.\(id).v1"))
        let writer = try #require(calls.firstIndex(of: "create SelfSubjectReview "))
        #expect(writer < revision, "\(calls)")
    }

    /// A cold `up` asks who it is (its record's first writer) as soon as it has made the namespace: beside the Lease's
    /// create, where it waited for the Lease (each held at the fake API server until the other arrived).
    @Test func aColdUpAsksWhoItIsBesideItsLease() async throws {
        let w = try WorkspaceHarness()
        let meet = Rendezvous(w.cluster, together: ["create Lease ws/", "create SelfSubjectReview"], seconds: 10)
        try await Self.coldUp(w, meet)
        #expect(meet.missed.isEmpty, "\(meet.missed)")
        #expect(w.cluster.calls.filter { $0.hasPrefix("create SelfSubjectReview") }.count == 1, "\(w.cluster.calls)")
    }

    /// A cold `up`'s apply in a namespace it made: the policies (quota, limits, NetworkPolicies) and the pods' inputs
    /// (the volume's claim, the Services, the Secrets) under way at once, one round trip where there were two; the
    /// workloads only once every policy has answered (no pod before its NetworkPolicy).
    @Test func aColdUpAppliesItsPoliciesAndThePodsInputsAtOnce() async throws {
        let w = try WorkspaceHarness()
        let cluster = w.cluster
        let meet = Rendezvous(
            cluster, together: ["apply ResourceQuota ws/", "apply PersistentVolumeClaim ws/", "apply Service ws/"],
            seconds: 10)
        try await Self.coldUp(w, meet)
        #expect(meet.missed.isEmpty, "\(meet.missed)")
        let calls = cluster.calls
        let policies = calls.indices.filter { i in
            ["apply ResourceQuota", "apply LimitRange", "apply NetworkPolicy"].contains { calls[i].hasPrefix($0) }
        }
        let workloads = calls.indices.filter { calls[$0].hasPrefix("apply Deployment") }
        #expect(!policies.isEmpty && !workloads.isEmpty, "\(calls)")
        #expect(policies.max() ?? 0 < workloads.min() ?? 0, "\(calls)")
    }

    /// A cold `up`'s first batch (the policies and every input of its pods: 14 objects for the agent's stack) is under
    /// way all at once: each of its applies is held at the fake API server until all of them have arrived (how many:
    /// counted by a first `up` that holds nothing). With at most 8 in flight, it took two round trips.
    @Test func aColdUpSendsItsWholeFirstBatchAtOnce() async throws {
        let firstBatch: @Sendable (String) -> Bool = { $0.hasPrefix("apply ") && !$0.hasPrefix("apply Deployment") }
        let counted = try WorkspaceHarness()
        try await Self.coldUp(counted, Rendezvous(counted.cluster, together: []))
        let calls = counted.cluster.calls
        let workloads = try #require(calls.firstIndex { $0.hasPrefix("apply Deployment") }, "\(calls)")
        let size = calls[..<workloads].filter(firstBatch).count
        #expect(size > 8, "\(calls)")
        let w = try WorkspaceHarness()
        let meet = Rendezvous(w.cluster, together: [], batch: (firstBatch, size), seconds: 10)
        try await Self.coldUp(w, meet)
        #expect(meet.missed.isEmpty, "\(meet.missed)")
    }

    /// A cold `up` lists the cluster's Nodes once: for its agent's image (AgentImage), and the same list names its new
    /// volumes' node (ClaimBinding), where that asked again as the volume's claim answered, on the apply's path.
    @Test func anUpListsTheNodesOnce() async throws {
        let w = try WorkspaceHarness()
        try w.cluster.seed(KubeObject(apiVersion: "v1", kind: "Node", name: "node-1"))
        var req = UpRequest(stack: "agent-workspace")
        req.cluster = w.clusterOptions
        #expect(await !AgentImage(ctx: w.ctx).present("so-agent-workspace-claude:local", req))
        let binding = ClaimBinding(
            ctx: w.ctx, client: w.cluster, namespace: "ws", progress: ProgressReporter(ctx: w.ctx, mode: .plain))
        let started = await binding.naming().started(["ws-workspace"])
        #expect(started != nil, "the one node was not found")
        #expect(w.cluster.calls.filter { $0 == "list Node" }.count == 1, "\(w.cluster.calls)")
    }

    /// "exec credentials" / "exec hand-over": which of a claim's execs a logged one is.
    static func execName(_ call: String) -> String {
        if call.contains("/tmp/so-clone-done") { return "exec hand-over" }
        if call.contains("so-secret-env") { return "exec credentials" }
        return call
    }
}

/// A file system that counts the reads of each path.
final class CountedReads: ForwardingFileSystem, @unchecked Sendable {
    private let lock = NSLock()
    private var read: [String: Int] = [:]
    var counts: [String: Int] { lock.withLock { read } }
    func count(_ path: String) -> Int { lock.withLock { read[path] ?? 0 } }
    override func readData(_ path: String) throws -> Data {
        lock.withLock { read[path, default: 0] += 1 }
        return try base.readData(path)
    }
}
