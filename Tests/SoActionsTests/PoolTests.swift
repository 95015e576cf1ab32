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

/// Warm pools: members made ahead, found by their Namespace, claimed once each (a Lease the API server lets
/// one creator make), refused when they do not fit, given back when the claim is interrupted.
@Suite struct PoolTests {
    static let origin = "https://github.com/acme/web.git"

    /// A pool of `size` on the fake cluster, every member's agent container running.
    func pool(_ w: WorkspaceHarness, size: Int, config: [String] = []) async throws -> PoolRecord {
        var record = PoolRecord(name: "warm", stack: "agent-workspace", size: size)
        record.config = config
        let members = try await PoolAction(w.ctx).create(record, cluster: w.clusterOptions)
        #expect(members.count == size)
        // Their agent containers run (unless the harness runs them as their Deployments are applied).
        for m in members where !m.warm {
            try w.cluster.seed(AgentPod.running(id: m.listing.id, namespace: m.listing.namespace))
        }
        return try #require(try PoolRecord.load(w.ctx, "warm"))
    }

    /// What the detached refills a claim started would do (`so pool fill POOL --at-most 1 --after 1`, each), run here
    /// (without the wait): the fake
    /// process runner only records them.
    static func runRefills(_ w: WorkspaceHarness, after seen: Int = 0) async throws -> Int {
        let refills = w.h.processes.detached.dropFirst(seen)
        for r in refills {
            let a = r.arguments
            guard a.count >= 8, Array(a[1...2]) == ["pool", "fill"],
                Array(a[4...7]) == ["--at-most", "1", "--after", "1.0"]
            else {
                Issue.record("not a refill: \(a)")
                continue
            }
            let record = try #require(try PoolRecord.load(w.ctx, a[3]))
            _ = try await PoolAction(w.ctx).fill(record, cluster: w.clusterOptions, atMost: 1)
        }
        return refills.count
    }

    /// A claim's refill runs detached; removing the pool waits for it to end, so no member it makes is left behind.
    @Test func removingAPoolWaitsForItsRefill() async throws {
        var w = try WorkspaceHarness()
        let p = try await pool(w, size: 1)
        let other = p.name
        PoolAction(w.ctx).refillDetached(p, cluster: w.clusterOptions)
        #expect(w.h.processes.detached.map(\.arguments.count) == [10])
        let looks = Counter()
        w.ctx.isProcessAlive = { pid in pid == 40001 && looks.next() < 6 }
        #expect(PoolAction(w.ctx).refilling(other) == 40001)
        let slept = w.clock.slept
        try await PoolAction(w.ctx).remove(other, cluster: w.clusterOptions)
        #expect(w.h.console.stdout.contains("pool warm: waiting for its refill (so pool fill, pid 40001) to end"))
        #expect(looks.value >= 6 && w.clock.slept - slept >= 0.4, "\(looks.value)")
        #expect(PoolAction(w.ctx).refilling(other) == nil && !w.h.fs.exists(w.h.path("so-home/pools/warm.refill")))
    }

    @Test func membersAreMadeFoundAndResized() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 3)
        let members = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)
        #expect(members.count == 3 && members.allSatisfy(\.warm))
        for m in members {
            #expect(m.listing.name.hasPrefix("warm-") && m.listing.namespace == m.listing.name)
            let env = try w.h.read("so-home/deployments/\(m.listing.name)/config.env")
            #expect(env.contains("GIT_CARRY=bundle") && env.contains("GIT_REPO=\n"), "\(env)")
        }
        #expect(try PoolRecord.load(w.ctx, "warm") == p && !p.files.isEmpty)
        var smaller = p
        smaller.size = 1
        #expect(try await PoolAction(w.ctx).create(smaller, cluster: w.clusterOptions).count == 1)
        try await PoolAction(w.ctx).remove("warm", cluster: w.clusterOptions)
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).isEmpty)
        #expect(try PoolRecord.load(w.ctx, "warm") == nil)
    }

    @Test func eachMemberIsClaimedOnceAndBecomesTheWorkspace() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 2)
        let claim = PoolClaim(ctx: w.ctx)
        var got: [String] = []
        for name in ["one", "two", "three"] {
            let dir = try w.ctx.namedDeployment(name)
            if let c = try await claim.claim(
                p, name: name, dir: dir, reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin),
                cluster: w.clusterOptions)
            {
                got.append(c.member)
                #expect(w.h.fs.isDirectory(dir) && !w.h.fs.isDirectory(w.h.path("so-home/deployments/\(c.member)")))
                let ns = try #require(w.cluster.object("Namespace", c.namespace))
                #expect(ns.annotations["laconic.com/deployment-dir"] == dir && ns.annotations["so.dev/pool"] == nil)
            }
        }
        #expect(got.count == 2 && Set(got).count == 2, "two members, two workspaces: \(got)")
        #expect(w.h.console.stdout.contains("pool warm has no warm workspace; starting three cold"))
        let listed = try await ListAction(w.ctx).run(cluster: w.clusterOptions)
        #expect(Set(listed.map(\.name)) == ["one", "two"], "\(listed.map(\.name))")
    }

    @Test func aMemberAnotherUpClaimedFirstIsPassedOver() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 2)
        let first = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)[0].listing
        // Another up's claim on the first member landed a moment before this one's.
        try w.cluster.seed(
            KubeObject(
                apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-pool-claim", namespace: first.namespace))
        let c = try await PoolClaim(ctx: w.ctx).claim(
            p, name: "mine", dir: try w.ctx.namedDeployment("mine"),
            reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin), cluster: w.clusterOptions)
        #expect(c != nil && c?.member != first.name)
    }

    /// A removal takes a member's claim Lease as a claim does: one an up is claiming at that moment is kept (said),
    /// and the others go.
    @Test func aMemberAnUpIsClaimingIsNotRemoved() async throws {
        let w = try WorkspaceHarness()
        _ = try await pool(w, size: 2)
        let members = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)
        let taken = members[0].listing
        try w.cluster.seed(PoolClaim.lease(taken, holder: "mine@elsewhere"))
        try await PoolAction(w.ctx).remove("warm", cluster: w.clusterOptions)
        #expect(w.h.console.stdout.contains("pool: kept \(taken.name): an up is claiming it"))
        #expect(w.cluster.object("Namespace", taken.namespace) != nil, "the member being claimed stays")
        #expect(w.cluster.object("Namespace", members[1].listing.namespace) == nil, "the other goes")
    }

    @Test func membersThatDoNotFitAreNotClaimedAndSaySo() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 1)
        let claim = PoolClaim(ctx: w.ctx)
        let dir = try w.ctx.namedDeployment("mine")
        // An origin the members' egress does not reach.
        let far = try await claim.claim(
            p, name: "mine", dir: dir, reach: .init(key: "GIT_ORIGIN", url: "https://git.example.org/acme/web.git"),
            cluster: w.clusterOptions)
        #expect(
            far == nil && w.h.console.stdout.contains("its egress does not reach https://git.example.org/acme/web.git"))
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).count == 1, "nothing claimed")
        // Other options: named, for an explicit --pool refused.
        var req = UpRequest(stack: "agent-workspace")
        req.with = ["postgres"]
        #expect(claim.mismatch(p, req) == "its --with is none, this workspace's postgres")
        req.with = nil
        req.config = ["GIT_USER_NAME=me", "LOG_LEVEL=debug"]
        #expect(claim.mismatch(p, req) == "its --config differs in LOG_LEVEL")
        req.pool = "warm"
        #expect(throws: SoError.self) { try claim.choose(req) }
        req.config = ["GIT_USER_NAME=me"]
        #expect(try claim.choose(req)?.name == "warm")
    }
}

@Suite struct PoolStackPathTests {
    /// A pool made from a relative path records it absolute: an up that names the same stack by another relative
    /// path, from another directory, finds it (and a refill, which runs in no particular directory, its stack).
    @Test func aPoolMadeFromARelativePathIsFoundFromAnotherDirectory() async throws {
        var w = try WorkspaceHarness()
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("layout/\(d)"))
        }
        w.ctx.fs = LocalFileSystem(currentDirectory: w.h.path("layout"))
        _ = try await PoolAction(w.ctx).create(
            PoolRecord(name: "warm", stack: "./stacks/agent-workspace", size: 0), cluster: w.clusterOptions)
        let saved = try #require(try PoolRecord.load(w.ctx, "warm"))
        #expect(saved.stack == w.ctx.fs.realpath(w.h.path("layout/stacks/agent-workspace")), "\(saved.stack)")
        w.ctx.fs = LocalFileSystem(currentDirectory: w.h.path("layout/compose"))
        #expect(try PoolClaim(ctx: w.ctx).choose(UpRequest(stack: "../stacks/agent-workspace"))?.name == "warm")
        #expect(try PoolClaim(ctx: w.ctx).choose(UpRequest(stack: "agent-workspace")) == nil, "a name is not a path")
    }

    /// The pool chosen ahead (while `up` reads the checkout) is chosen in silence; what it passed over is said when
    /// the claim takes it, as a choice made then says it.
    @Test func aPoolChosenAheadSaysWhatItPassedOverWhenTaken() async throws {
        var w = try WorkspaceHarness()
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("layout/\(d)"))
        }
        w.ctx.fs = LocalFileSystem(currentDirectory: w.h.path("layout"))
        var debug = PoolRecord(name: "a-debug", stack: "./stacks/agent-workspace", size: 0)
        debug.config = ["LOG_LEVEL=debug"]
        _ = try await PoolAction(w.ctx).create(debug, cluster: w.clusterOptions)
        _ = try await PoolAction(w.ctx).create(
            PoolRecord(name: "b-plain", stack: "./stacks/agent-workspace", size: 0), cluster: w.clusterOptions)
        var req = UpRequest(stack: "./stacks/agent-workspace")
        req.cluster = w.clusterOptions
        let before = w.h.console.stdout
        let listing = try #require(PoolClaim.Listing.ahead(w.ctx, req, existing: false))
        defer { listing.members.cancel() }
        #expect(listing.pool == "b-plain")
        #expect(w.h.console.stdout == before, "chosen ahead in silence")
        #expect(listing.chosen(w.ctx).name == "b-plain")
        let said = String(w.h.console.stdout.dropFirst(before.count))
        #expect(said.contains("pool a-debug not used: its --config differs in LOG_LEVEL"), "\(said)")
        #expect(try PoolClaim(ctx: w.ctx).choose(req)?.name == "b-plain")
    }
}

@Suite struct PoolStaleTests {
    @Test func aPoolWhoseStackChangedIsRefusedNamingTheFiles() async throws {
        let w = try WorkspaceHarness()
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("layout/\(d)"))
        }
        let stack = w.h.path("layout/stacks/agent-workspace")
        let record = PoolRecord(name: "warm", stack: stack, size: 1)
        _ = try await PoolAction(w.ctx).create(record, cluster: w.clusterOptions)
        let saved = try #require(try PoolRecord.load(w.ctx, "warm"))
        #expect(saved.files.keys.contains("compose/docker-compose-agent-workspace.yml"), "\(saved.files.keys.sorted())")
        #expect(saved.files.keys.contains("config/agent-workspace/clone.sh"))
        var req = UpRequest(stack: stack)
        #expect(PoolClaim(ctx: w.ctx).mismatch(saved, req) == nil)
        let compose = w.h.path("layout/compose/docker-compose-agent-workspace.yml")
        try (try String(contentsOfFile: compose, encoding: .utf8) + "# changed\n").write(
            toFile: compose, atomically: true, encoding: .utf8)
        #expect(
            PoolClaim(ctx: w.ctx).mismatch(saved, req)
                == "it no longer matches its stack (compose/docker-compose-agent-workspace.yml changed)")
        req.pool = "warm"
        #expect(throws: SoError.self) { try PoolClaim(ctx: w.ctx).choose(req) }
        let refill = await #expect(throws: SoError.self) {
            try await PoolAction(w.ctx).fill(saved, cluster: w.clusterOptions)
        }
        #expect(
            refill?.message
                == "pool warm no longer matches its stack: compose/docker-compose-agent-workspace.yml changed since it was made"
        )
    }
}

/// A claim end to end on the fake cluster, with the container's /workspace a local directory: the checkout is
/// carried into the member, and the stack's own clone.sh (waiting there as the member's entrypoint) makes the
/// workspace's branch with the checkout's origin.
@Suite(.serialized) struct PoolClaimCarryTests {
    func upInCheckout(_ c: CarryHarness, _ name: String) async throws -> UpResult {
        var req = UpRequest(stack: "agent-workspace")
        req.name = name
        req.from = c.mine
        req.cluster = c.w.clusterOptions
        req.wait = false
        req.progress = .plain
        return try await UpAction(c.w.ctx).run(req)
    }

    /// The member's entrypoint, as it waited since it was made: its config says GIT_CARRY=bundle and its own name.
    static func runMemberClone(_ c: CarryHarness, member: String) async throws {
        let script = try RepoPaths.cloneScript().replacingOccurrences(of: "/workspace", with: c.container)
        var env = GitWorkspace.env
        env["GIT_CARRY"] = "bundle"
        env["WORKSPACE_NAME"] = member
        let clone = try await LocalProcessRunner().run(
            ["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 60)
        #expect(clone.exitCode == 0, "\(clone.stdout)\(clone.stderr)")
    }

    @Test func aClaimedMemberGetsTheCheckoutItsBranchAndItsOrigin() async throws {
        let c = try await CarryHarness()
        _ = try await CarryHarness.git(["remote", "add", "origin", "https://github.com/acme/web.git"], in: c.mine)
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        let r = try await upInCheckout(c, "mine-ws")
        #expect(r.namespace == member.listing.namespace && r.note == "claimed from pool warm", "\(r)")
        #expect(c.w.h.console.stdout.contains("mine-ws: claimed \(member.listing.name) from pool warm"))
        try await PoolClaimCarryTests.runMemberClone(c, member: member.listing.name)
        #expect(try await CarryHarness.git(["rev-parse", "--abbrev-ref", "HEAD"], in: c.container) == "agent/mine-ws")
        #expect(
            try await CarryHarness.git(["remote", "get-url", "origin"], in: c.container)
                == "https://github.com/acme/web.git")
        // The pool is refilled by one, in a process of its own (its id kept for pool list); the workspace is listed
        // by its name.
        #expect(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).isEmpty)
        #expect(
            c.w.h.processes.detached.map(\.arguments) == [
                [
                    "so", "pool", "fill", "warm", "--at-most", "1", "--after", "1.0", "--kubeconfig",
                    c.w.h.path("kubeconfig"),
                ]
            ])
        #expect(c.w.h.processes.detached.first?.output == c.w.h.path("so-home/pools/warm.fill.log"))
        #expect(PoolAction(c.w.ctx).refilling("warm") == 40001)
        #expect(try await PoolTests.runRefills(c.w) == 1)
        #expect(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).count == 1)
        let listed = try await ListAction(c.w.ctx).run(cluster: c.w.clusterOptions)
        #expect(listed.contains { $0.name == "mine-ws" && $0.namespace == member.listing.namespace })
    }

    /// A claim writes what a claim needs and nothing of the next member, whose making is a process of its own: the
    /// claim's Lease, the workspace's record on its Namespace, the claimer's credentials in its Secret.
    @Test func aClaimWritesOnlyWhatAClaimNeeds() async throws {
        var c = try await CarryHarness()
        c.w.ctx.environment["ANTHROPIC_API_KEY"] = "claimer-key-not-real"
        _ = try await CarryHarness.git(["remote", "add", "origin", "https://github.com/acme/web.git"], in: c.mine)
        let p = try await PoolTests().pool(c.w, size: 2)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        let ns = member.listing.namespace
        let before = c.w.cluster.calls.count
        let r = try await upInCheckout(c, "mine-ws")
        #expect(r.note == "claimed from pool warm", "\(r)")
        let verbs = ["create", "apply", "patch", "update", "delete"]
        let writes = c.w.cluster.calls[before...].filter { verbs.contains(String($0.split(separator: " ")[0])) }
        #expect(
            writes == [
                "create Lease \(ns)/so-pool-claim", "patch Namespace \(ns)",
                "patch Secret \(ns)/\(member.listing.id)-generated-secrets",
            ], "\(writes)")
        #expect(c.w.h.processes.detached.count == 1)
        // The member's pods are read once, when the pool is listed: the claim execs into the pod found then.
        let podReads = c.w.cluster.calls[before...].filter { $0.hasPrefix("list Pod") && $0.contains(ns) }
        #expect(podReads.count == 1, "\(Array(c.w.cluster.calls[before...]))")
    }

    /// Members hold no one's credentials (the pool maker's environment has a key: it is not copied); the claim
    /// hands in the claimer's, into the workspace's Secret and the running container, never a file here or a
    /// command line, and never said.
    @Test func membersHoldNoCredentialsAndAClaimHandsInTheClaimers() async throws {
        var c = try await CarryHarness()
        _ = try await CarryHarness.git(["remote", "add", "origin", "https://github.com/acme/web.git"], in: c.mine)
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        let ns = member.listing.namespace
        func secret() throws -> JSON {
            try #require(c.w.cluster.object("Secret", "\(member.listing.id)-generated-secrets", namespace: ns))
        }
        #expect(try secret().at("data", "ANTHROPIC_API_KEY") == nil, "a member holds no credentials")
        #expect(!c.w.ctx.diagnostics.all.contains { $0.message.contains("secret-env") }, "nor warns of them")
        c.w.ctx.environment["ANTHROPIC_API_KEY"] = "claimer's-key-not-real"
        c.w.ctx.environment["GITHUB_TOKEN"] = nil
        let r = try await upInCheckout(c, "mine-ws")
        #expect(r.note == "claimed from pool warm", "\(r)")
        #expect(
            try secret().at("data", "ANTHROPIC_API_KEY")?.string
                == Data("claimer's-key-not-real".utf8).base64EncodedString())
        let fed = c.w.h.processes.fed
        #expect(
            fed.count == 1 && fed[0].arguments.contains("-i") && fed[0].arguments.contains(ns),
            "\(fed.map(\.arguments))")
        #expect(fed.first?.input == #"export ANTHROPIC_API_KEY='claimer'\''s-key-not-real'"# + "\n")
        #expect(fed.first?.arguments.contains { $0.contains("claimer") } == false, "never on a command line")
        let said = c.w.h.console.stdout + c.w.h.console.stderr
        #expect(!said.contains("claimer's-key"))
        #expect(
            c.w.ctx.diagnostics.all.contains {
                $0.message.hasPrefix("secret-env GITHUB_TOKEN") && $0.message.contains("mine-ws gets no value")
            },
            "\(c.w.ctx.diagnostics.all.map(\.message))")
        // What runs in the container reads the handed file first.
        let exec = c.w.h.processes.calls.map(\.arguments).filter { $0.contains("exec") && $0.contains(ns) }
        #expect(!exec.isEmpty && exec.allSatisfy { $0.contains { $0.hasPrefix(HandedCredentials.prelude) } })
    }

    @Test func aClaimedMemberThatFailsBeforeItIsReadyGoesAndTheWorkspaceStartsCold() async throws {
        let c = try await CarryHarness()
        _ = try await CarryHarness.git(["remote", "add", "origin", "https://github.com/acme/web.git"], in: c.mine)
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        // The member's container is gone by the time the checkout comes: carrying it in fails.
        let carryCold = c.w.h.processes.streamingFallback
        let memberNamespace = member.listing.namespace
        c.w.h.processes.streamingFallback = { args, stdin, stdout in
            if let n = args.firstIndex(of: "-n"), args[n + 1] == memberNamespace {
                return ProcessResult(
                    exitCode: 1, stderr: "error: unable to upgrade connection: container not found (\"agent\")")
            }
            return try await carryCold?(args, stdin, stdout)
        }
        let r = try await upInCheckout(c, "cold-ws")
        #expect(r.namespace == "cold-ws" && r.note != "claimed from pool warm", "\(r)")
        #expect(
            c.w.ctx.diagnostics.all.contains {
                $0.message.hasPrefix("the workspace claimed from pool warm failed before it was ready")
            })
        #expect(c.w.cluster.object("Namespace", member.listing.namespace) == nil, "the failed member is gone")
    }
}

/// A file system that interrupts the run (as Ctrl-C would) when a claim moves a member's directory.
final class InterruptingMoveFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let interrupts: Interrupts
    init(base: FileSystem, interrupts: Interrupts) {
        self.interrupts = interrupts
        super.init(base: base)
    }
    override func move(_ from: String, to: String) throws {
        interrupts.interrupt(signal: SIGINT)
        try base.move(from, to: to)
    }
}

@Suite struct PoolInterruptTests {
    /// An up interrupted after it took a member and before the member became its workspace gives it back.
    @Test func anInterruptedClaimGivesTheMemberBack() async throws {
        var w = try WorkspaceHarness()
        let p = try await PoolTests().pool(w, size: 1)
        let member = try #require(try await PoolAction(w.ctx).members(p.name, cluster: w.clusterOptions).first)
        let record = ExitRecord()
        let cluster = w.cluster
        let ns = member.listing.namespace
        let interrupts = Interrupts(terminate: { code in
            record.codes.append(code)
            record.leftAtExit =
                cluster.object("Lease", "so-pool-claim", namespace: ns) == nil ? ["given back"] : ["held"]
        })
        w.ctx.interrupts = interrupts
        // A loaded machine (every suite at once) can leave the give-back unscheduled for seconds.
        w.ctx.interruptReleaseSeconds = 120
        w.ctx.fs = InterruptingMoveFileSystem(base: w.ctx.fs, interrupts: interrupts)
        _ = try? await PoolClaim(ctx: w.ctx).claim(
            p, name: "mine", dir: try w.ctx.namedDeployment("mine"),
            reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin),
            cluster: w.clusterOptions)
        #expect(
            record.codes == [130] && record.leftAtExit == ["given back"], "\(record.codes) \(record.leftAtExit ?? [])")
    }
}

@Suite(.serialized) struct PoolClaimRemoteTests {
    /// A workspace from a remote (`--config GIT_REPO=`) claims a member too: the member's clone.sh, waiting,
    /// learns the repository from the claim and clones it onto the workspace's branch.
    @Test func aWorkspaceFromARemoteClaimsAMemberThatClonesIt() async throws {
        let c = try await CarryHarness()
        let origin = c.w.h.path("origin.git")
        _ = try await LocalProcessRunner().run(
            ["git", "clone", "-q", "--bare", c.mine, origin], workingDirectory: nil, environment: GitWorkspace.env,
            timeout: 60)
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        var req = UpRequest(stack: "agent-workspace")
        req.name = "remote-ws"
        req.config = ["GIT_REPO=file://\(origin)"]
        req.cluster = c.w.clusterOptions
        req.wait = false
        let before = c.w.h.processes.calls.count
        let r = try await UpAction(c.w.ctx).run(req)
        #expect(r.namespace == member.listing.namespace && r.note == "claimed from pool warm", "\(r)")
        // Beside the credentials' exec, one into the member: the repository handed over, and the clone waited for in
        // the same one.
        let execs = c.w.h.processes.calls.dropFirst(before).map(\.arguments).filter {
            $0.contains("exec") && !$0.contains { $0.contains("so-secret-env.part") }
        }
        #expect(execs.count == 1 && execs.first?.contains { $0.contains("/tmp/so-clone-done") } == true, "\(execs)")
        try await PoolClaimCarryTests.runMemberClone(c, member: member.listing.name)
        #expect(
            try await CarryHarness.git(["rev-parse", "--abbrev-ref", "HEAD"], in: c.container) == "agent/remote-ws")
        #expect(try await CarryHarness.git(["remote", "get-url", "origin"], in: c.container) == "file://\(origin)")
        #expect(try await CarryHarness.git(["log", "-1", "--format=%s"], in: c.container) == "local only")
    }
}

@Suite struct PoolConfinementTests {
    /// Another host's members are not this host's pool (their directories are not here): never listed, claimed
    /// or removed from here.
    @Test func anotherHostsMembersAreNotThisPools() async throws {
        var w = try WorkspaceHarness()
        _ = try await PoolTests().pool(w, size: 1)
        w.ctx.hostName = "other-host"
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).isEmpty)
    }

    /// Another $SO_HOME on this host with a pool of the same name (the stack's, as `pool create` and the spec's
    /// `workspace.pool` name it): its members are not this home's pool, and an `up` here never claims one.
    @Test func anotherHomesMembersAreNotThisPools() async throws {
        var w = try WorkspaceHarness()
        _ = try await PoolTests().pool(w, size: 1)
        w.ctx.environment["SO_HOME"] = w.h.path("another-home")
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).isEmpty)
    }

    /// A member whose files cannot be read once its Lease is taken is given back, and the up fails saying why.
    @Test func aClaimThatFailsBeforeTheMoveGivesTheMemberBack() async throws {
        let w = try WorkspaceHarness()
        let p = try await PoolTests().pool(w, size: 1)
        let member = try #require(try await PoolAction(w.ctx).members(p.name, cluster: w.clusterOptions).first)
        try w.h.fs.remove(w.h.path("so-home/deployments/\(member.listing.name)/deployment.yml"))
        await #expect(throws: SoError.self) {
            try await PoolClaim(ctx: w.ctx).claim(
                p, name: "mine", dir: try w.ctx.namedDeployment("mine"),
                reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin), cluster: w.clusterOptions)
        }
        #expect(w.cluster.object("Lease", "so-pool-claim", namespace: member.listing.namespace) == nil)
    }

    @Test func aPoolNameIsNeverAPath() throws {
        let w = try WorkspaceHarness()
        for bad in ["../x", "a/b", "..", ""] {
            #expect(throws: SoError.self) { try PoolRecord.load(w.ctx, bad) }
        }
    }
}

/// `workspace: {pool: N}` in the stack's spec-defaults: the first `so up` makes the pool (named after the stack),
/// the next claims from it, and a new N resizes it.
@Suite(.serialized) struct PoolFromSpecTests {
    func stack(_ c: CarryHarness, pool: Int) throws -> String {
        if !c.w.h.fs.isDirectory(c.w.h.path("layout")) {
            for d in ["stacks", "compose", "config"] {
                try FileManager.default.copyItem(
                    atPath: Path.join(RepoPaths.root, d), toPath: c.w.h.path("layout/\(d)"))
            }
        }
        let path = c.w.h.path("layout/stacks/agent-workspace/stack.yml")
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(
            of: #"\n    pool: \d+"#, with: "", options: .regularExpression
        ).replacingOccurrences(of: "    agent: claude\n", with: "    agent: claude\n    pool: \(pool)\n")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return c.w.h.path("layout/stacks/agent-workspace")
    }

    func up(_ c: CarryHarness, _ stack: String, _ name: String) async throws -> UpResult {
        var req = UpRequest(stack: stack)
        req.name = name
        req.config = ["GIT_REPO=https://github.com/acme/web"]
        req.cluster = c.w.clusterOptions
        req.wait = false
        return try await UpAction(c.w.ctx).run(req)
    }

    @Test func theFirstUpMakesThePoolTheNextClaimsAndANewSizeResizes() async throws {
        let c = try await CarryHarness()
        var stack = try self.stack(c, pool: 2)
        let first = try await up(c, stack, "one")
        #expect(first.note != "claimed from pool agent-workspace", "the first starts cold: \(first)")
        let record = try #require(try PoolRecord.load(c.w.ctx, "agent-workspace"))
        #expect(
            record.size == 2 && record.stack == stack && record.config == ["GIT_REPO=https://github.com/acme/web"]
                && record.fromSpec == true, "\(record)")
        #expect(c.w.h.console.stdout.contains("pool agent-workspace: 2 warm workspaces on the way"))
        #expect(try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions).count == 2)
        let second = try await up(c, stack, "two")
        #expect(second.note == "claimed from pool agent-workspace", "\(second)")
        #expect(try await PoolTests.runRefills(c.w) == 1)
        #expect(try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions).count == 2)
        let before = Set(
            try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions).map(\.listing.name))
        // The stack changes (its pool: with it): its members no longer match it, so the next up starts cold, and the
        // pool is made again from the stack as it is, at the new size.
        stack = try self.stack(c, pool: 3)
        let third = try await up(c, stack, "three")
        #expect(third.note != "claimed from pool agent-workspace")
        #expect(c.w.h.console.stdout.contains("pool agent-workspace: 3 warm workspaces on the way"))
        let after = try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions)
        #expect(after.count == 3 && before.isDisjoint(with: after.map(\.listing.name)), "\(before) \(after)")
        #expect(try PoolRecord.load(c.w.ctx, "agent-workspace")?.size == 3)
        // A pool of that name made by hand with other options is not the spec's: left as it is, saying so.
        try await PoolAction(c.w.ctx).remove("agent-workspace", cluster: c.w.clusterOptions)
        var mine = PoolRecord(name: "agent-workspace", stack: stack, size: 1)
        mine.with = ["postgres"]
        _ = try await PoolAction(c.w.ctx).create(mine, cluster: c.w.clusterOptions)
        _ = try await up(c, stack, "four")
        #expect(
            c.w.h.console.stdout.contains(
                "pool agent-workspace is not kept for the spec's workspace.pool: its --with is postgres"),
            "\(c.w.h.console.stdout)")
        #expect(try PoolRecord.load(c.w.ctx, "agent-workspace")?.size == 1)
    }

    @Test func aPoolSizeThatIsNotZeroToFiftyIsRefusedNamingTheLine() throws {
        let h = try Harness()
        try h.tmp.write(
            "bad/spec.yml", "stack: agent-workspace\ndeploy-to: k8s-kind\nworkspace:\n  service: agent\n  pool: 99\n")
        let e = #expect(throws: SoError.self) {
            try Spec.load(h.path("bad/spec.yml"), fs: h.fs, diagnostics: DiagnosticSink())
        }
        #expect(e?.message == "workspace pool 99 is not a number from 0 to 50", "\(String(describing: e))")
        #expect(String(describing: e).contains("spec.yml:5"), "names the line: \(String(describing: e))")
    }
}
