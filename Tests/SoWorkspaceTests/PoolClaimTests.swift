import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Synchronization
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

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

    /// A harness whose checkout's origin is on GitHub, its pool of one (`warm`), and that pool's member.
    static func warmPoolOfOne() async throws -> (CarryHarness, PoolRecord, PoolAction.Member) {
        let c = try await CarryHarness()
        _ = try await CarryHarness.git(["remote", "add", "origin", "https://github.com/acme/web.git"], in: c.mine)
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        return (c, p, member)
    }

    /// A claim in a checkout into a member whose listener answers goes without an exec: the bundle follows the ready
    /// file's lines on the port-forward (`deliverForwarded`), its length in the message's head.
    @Test func aClaimInACheckoutIsHandedOverThroughAPortForward() async throws {
        let (c, _, member) = try await Self.warmPoolOfOne()
        c.w.cluster.portForwardOutcomes = [.answered("handed")]
        let r = try await upInCheckout(c, "mine-ws")
        #expect(r.note == "claimed from pool warm", "\(r)")
        let ns = member.listing.namespace
        let sent = try #require(c.w.cluster.portForwardSent.first)
        let head = sent.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
        #expect(head.split(separator: " ").count == 6 && head.hasPrefix("so-handover 1 0 "), "\(head)")
        #expect(
            sent.contains("\nbranch=agent/mine-ws\norigin=https://github.com/acme/web.git\n"), "\(sent.prefix(300))")
        #expect(c.w.h.processes.fed.filter { $0.arguments.contains(ns) }.isEmpty, "no exec carried it")
        #expect(c.w.h.processes.streamed.filter { $0.arguments.contains(ns) }.isEmpty)
    }

    /// The member's entrypoint, as it waited since it was made: its config says GIT_CARRY=bundle and its own name.
    static func runMemberClone(_ c: CarryHarness, member: String) async throws {
        let script = try c.cloneScript()
        var env = GitWorkspace.env
        env["GIT_CARRY"] = "bundle"
        env["WORKSPACE_NAME"] = member
        let clone = try await LocalProcessRunner().run(
            ["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 60)
        #expect(clone.exitCode == 0, "\(clone.stdout)\(clone.stderr)")
    }

    @Test func aClaimedMemberGetsTheCheckoutItsBranchAndItsOrigin() async throws {
        let (c, p, member) = try await Self.warmPoolOfOne()
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

    /// A claimed workspace commits as its claimer, not as whoever made the pool (the soak found every claim did): the
    /// member is made naming no one (its making asks git for no identity), the claim hands the claimer's to the clone,
    /// which writes it into the checkout's config, over a member's environment; and the workspace's files hold its own
    /// name and identity, as a cold `up`'s do, so its next start and the record say the same.
    @Test func aClaimedWorkspaceCommitsAsItsClaimer() async throws {
        let c = try await CarryHarness()
        let p = try await PoolTests().pool(c.w, size: 1)
        let asked = c.w.h.processes.calls.filter {
            $0.arguments.starts(with: ["git"]) && $0.arguments.contains("--get-regexp")
        }
        #expect(asked.isEmpty, "a member's making asked git who it is: \(asked.map(\.arguments))")
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        let memberEnv = try ConfigEnv.load(
            c.w.h.path("so-home/deployments/\(member.listing.name)/config.env"), fs: c.w.ctx.fs)
        #expect(!memberEnv.contains { $0.key == "GIT_USER_NAME" || $0.key == "GIT_USER_EMAIL" }, "\(memberEnv)")
        var req = UpRequest(stack: "agent-workspace")
        req.name = "mine-ws"
        req.from = c.mine
        req.config = ["GIT_USER_NAME=Claimer\nrepo=file:///elsewhere", "GIT_USER_EMAIL=claimer@example.invalid"]
        req.cluster = c.w.clusterOptions
        req.wait = false
        let r = try await UpAction(c.w.ctx).run(req)
        #expect(r.note == "claimed from pool warm", "\(r)")
        // The member's entrypoint, with the environment an older member had: its maker's identity.
        let script = try c.cloneScript()
        var env = GitWorkspace.env
        for k in ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"] { env[k] = nil }
        env["GIT_CARRY"] = "bundle"
        env["WORKSPACE_NAME"] = member.listing.name
        env["GIT_USER_NAME"] = "Pool Maker"
        env["GIT_USER_EMAIL"] = "maker@example.invalid"
        let clone = try await LocalProcessRunner().run(
            ["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 60)
        #expect(clone.exitCode == 0, "\(clone.stdout)\(clone.stderr)")
        // A line break in a value stays in its line: the clone took the checkout, not another repository.
        #expect(try await CarryHarness.git(["log", "-1", "--format=%s"], in: c.container) == "local only")
        let committed = try await LocalProcessRunner().run(
            [
                "sh", "-c",
                "cd \(CommandText.quote(c.container)) && git commit -q --allow-empty -m mine && git log -1 --format='%an <%ae>'",
            ],
            workingDirectory: nil, environment: env.filter { !$0.key.hasPrefix("GIT_USER") }, timeout: 60)
        #expect(committed.stdout == "Claimer repo=file:///elsewhere <claimer@example.invalid>\n", "\(committed)")
        let dir = c.w.h.path("so-home/deployments/mine-ws")
        let held = Dictionary(try ConfigEnv.load(dir + "/config.env", fs: c.w.ctx.fs).map { ($0.key, $0.value) }) { $1 }
        #expect(held["WORKSPACE_NAME"] == "mine-ws" && held["GIT_USER_EMAIL"] == "claimer@example.invalid", "\(held)")
        #expect(held["GIT_USER_NAME"] == "Claimer repo=file:///elsewhere", "\(held)")
        let spec = try c.w.ctx.fs.readText(dir + "/spec.yml")
        #expect(spec.contains("WORKSPACE_NAME: mine-ws") && spec.contains("claimer@example.invalid"), "\(spec)")
    }

    /// A claim writes what a claim needs and nothing of the next member, whose making is a process of its own: the
    /// claim's Lease, the workspace's name on its Namespace, the claimer's credentials in its Secret, and the claim's
    /// revision of the record (who the writer is, the revision, who wrote last on the Namespace: written meanwhile).
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
        // The Lease first; the rest in any order: the name on the Namespace is a task of its own beside the carry's
        // Secret (under ThreadSanitizer the Secret's patch once came first).
        #expect(writes.first == "create Lease \(ns)/so-pool-claim", "\(writes)")
        #expect(
            writes.dropFirst().sorted()
                == [
                    "create Secret \(ns)/so.record.\(member.listing.id).v2", "create SelfSubjectReview ",
                    "patch Namespace \(ns)", "patch Namespace \(ns)",
                    "patch Secret \(ns)/\(member.listing.id)-generated-secrets",
                ].sorted(), "\(writes)")
        let head = try #require(
            try await RecordStore(client: c.w.cluster, namespace: ns, deployment: member.listing.id).heads().last)
        #expect(head.verb == "claim" && head.result == "claimed" && head.pool == "warm")
        #expect(c.w.h.processes.detached.count == 1)
        // The member's pods are read once, when the pool is listed: the claim execs into the pod found then.
        let podReads = c.w.cluster.calls[before...].filter { $0.hasPrefix("list Pod") && $0.contains(ns) }
        #expect(podReads.count == 1, "\(Array(c.w.cluster.calls[before...]))")
    }

    /// HEAD's history is counted beside a claim, not before it: each count (held here until the hand-over's exec has
    /// begun, for at most 20 s) sees that exec begun, and the workspace's source says the counts all the same.
    @Test func aClaimDoesNotWaitForTheHistorysCount() async throws {
        let (c, _, member) = try await Self.warmPoolOfOne()
        let ns = member.listing.namespace
        let processes = c.w.h.processes
        let git = processes.environmentFallback
        let seen = Mutex<[Bool]>([])
        processes.environmentFallback = { args, env in
            if args.contains("rev-list") && args.contains("--count") {
                func began() -> Bool { processes.fed.contains { $0.arguments.contains(ns) } }
                for _ in 0..<2000 where !began() { try await Task.sleep(for: .milliseconds(10)) }
                let handOverBegan = began()
                seen.withLock { $0.append(handOverBegan) }
            }
            return try await git?(args, env)
        }
        let r = try await upInCheckout(c, "mine-ws")
        #expect(r.note == "claimed from pool warm", "\(r)")
        #expect(seen.withLock { $0 } == [true, true])
        #expect(r.source?.commits == 2 && r.source?.localCommits == 2, "\(String(describing: r.source))")
    }

    /// Members hold no one's credentials (the pool maker's environment has a key: it is not copied); the claim
    /// hands in the claimer's, into the workspace's Secret and the running container, never a file here or a
    /// command line, and never said.
    @Test func membersHoldNoCredentialsAndAClaimHandsInTheClaimers() async throws {
        var (c, _, member) = try await Self.warmPoolOfOne()
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
        // In the hand-over's own exec (one exec into the member, not two), on its stdin before the bundle: the
        // container's file of them holds them; no command line does, nor a file here (kubectl is fed them).
        let handOver = c.w.h.processes.fed.filter { $0.arguments.contains(ns) }
        #expect(handOver.count == 1 && handOver[0].arguments.contains("-i"), "\(handOver.map(\.arguments))")
        #expect(handOver.first?.input.contains("export ANTHROPIC_API_KEY=") == true)
        #expect(handOver.allSatisfy { !$0.arguments.contains { $0.contains("claimer") } }, "never on a command line")
        #expect(c.w.h.processes.streamed.filter { $0.arguments.contains(ns) }.isEmpty)
        #expect(
            try String(contentsOfFile: c.shm + "/so-secret-env", encoding: .utf8)
                == #"export ANTHROPIC_API_KEY='claimer'\''s-key-not-real'"# + "\n")
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
        let (c, _, member) = try await Self.warmPoolOfOne()
        // The member's container is gone by the time the checkout comes: carrying it in fails.
        let carryCold = c.w.h.processes.feedingFallback
        let memberNamespace = member.listing.namespace
        c.w.h.processes.feedingFallback = { args, input in
            if let n = args.firstIndex(of: "-n"), args[n + 1] == memberNamespace {
                return ProcessResult(
                    exitCode: 1, stderr: "error: unable to upgrade connection: container not found (\"agent\")")
            }
            return try await carryCold?(args, input)
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
    /// `so up agent-workspace --name remote-ws --config GIT_REPO=file://ORIGIN`, not waiting for the clone.
    static func upFromRemote(_ c: CarryHarness, _ origin: String) async throws -> UpResult {
        var req = UpRequest(stack: "agent-workspace")
        req.name = "remote-ws"
        req.config = ["GIT_REPO=file://\(origin)"]
        req.cluster = c.w.clusterOptions
        req.wait = false
        return try await UpAction(c.w.ctx).run(req)
    }

    /// A workspace from a remote (`--config GIT_REPO=`) claims a member too: the member's clone.sh, waiting,
    /// learns the repository from the claim and clones it onto the workspace's branch.
    @Test func aWorkspaceFromARemoteClaimsAMemberThatClonesIt() async throws {
        let c = try await CarryHarness()
        let origin = try await c.origin()
        let p = try await PoolTests().pool(c.w, size: 1)
        let member = try #require(try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
        let before = c.w.h.processes.calls.count
        let r = try await Self.upFromRemote(c, origin)
        #expect(r.namespace == member.listing.namespace && r.note == "claimed from pool warm", "\(r)")
        // One exec into the member: the claimer's credentials, the repository handed over, and the clone waited for.
        let execs = c.w.h.processes.calls.dropFirst(before).map(\.arguments).filter { $0.contains("exec") }
        #expect(execs.count == 1 && execs.first?.contains { $0.contains("/tmp/so-clone-done") } == true, "\(execs)")
        try await PoolClaimCarryTests.runMemberClone(c, member: member.listing.name)
        #expect(
            try await CarryHarness.git(["rev-parse", "--abbrev-ref", "HEAD"], in: c.container) == "agent/remote-ws")
        #expect(try await CarryHarness.git(["remote", "get-url", "origin"], in: c.container) == "file://\(origin)")
        #expect(try await CarryHarness.git(["log", "-1", "--format=%s"], in: c.container) == "local only")
    }

    /// A member whose pod runs its workspace's container alone is handed its claim through a port-forward to the
    /// listener its clone.sh keeps (`handOverForwarded`): no exec runs in it when the listener answers; where it does
    /// not (no listener: an older clone.sh, an image without python3), the exec hands it over as before.
    @Test func aClaimFromARemoteIsHandedOverThroughAPortForwardElseByExec() async throws {
        for answer in [PortForwardOutcome.answered("handed"), .failed(why: "connection refused")] {
            let c = try await CarryHarness()
            let origin = try await c.origin()
            let p = try await PoolTests().pool(c.w, size: 1)
            let member = try #require(
                try await PoolAction(c.w.ctx).members(p.name, cluster: c.w.clusterOptions).first)
            #expect(member.alone, "the stack's workspace pod runs one container")
            c.w.cluster.portForwardOutcomes = [answer]
            let before = c.w.h.processes.calls.count
            let r = try await Self.upFromRemote(c, origin)
            #expect(r.note == "claimed from pool warm", "\(r)")
            let ns = member.listing.namespace
            #expect(c.w.cluster.calls.contains("portforward \(ns)/\(try #require(member.pod)):47017"))
            let sent = try #require(c.w.cluster.portForwardSent.first)
            #expect(sent.hasPrefix("so-handover 1 0 "), "no wait asked: ticks 0")
            #expect(sent.contains("\nrepo=file://\(origin)\nref=\nbranch=agent/remote-ws\n"), "\(sent)")
            let execs = c.w.h.processes.calls.dropFirst(before).map(\.arguments).filter { $0.contains("exec") }
            if case .answered = answer {
                #expect(execs.isEmpty, "\(execs)")
            } else {
                #expect(execs.count == 1, "\(execs)")
            }
        }
    }
}
