import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// A young container without a probe is believed once its own first process says it has run a second, sooner than
/// the kubelet's next round; one that cannot say (no `cat`, no exec) is believed by the round, as before; one that is
/// gone, or whose ask fails in words not known, is not believed by the round.
@Suite struct ContainerUptimeTests {
    /// The container of `WaitEvidenceTests.Kubelet`, asked through an exec that takes `takes` s of the test clock (0.1):
    /// it answers its age (it started at t0) while it runs, and `gone` once it exited. `answer` overrides. Its files
    /// are read at the end of the exec, or with `readFirst` at its start (a busy node slow to bring the answer back).
    final class Asked: ContainerUptime, @unchecked Sendable {
        let kubelet: WaitEvidenceTests.Kubelet
        let answer: UptimeAnswer?
        let gone: UptimeAnswer
        let takes: Double
        let readFirst: Bool
        private let lock = NSLock()
        private var times: [Double] = []
        var asked: [Double] { lock.withLock { times } }
        init(
            _ kubelet: WaitEvidenceTests.Kubelet, answer: UptimeAnswer? = nil,
            gone: UptimeAnswer = .notRunning("container not found"), takes: Double = 0.1, readFirst: Bool = false
        ) {
            self.kubelet = kubelet
            self.answer = answer
            self.gone = gone
            self.takes = takes
            self.readFirst = readFirst
        }
        func uptime(pod: String, container: String, namespace: String) async -> UptimeAnswer {
            #expect(pod == "web-1" && container == "c" && namespace == "ns")
            let began = kubelet.clock.now().timeIntervalSince(kubelet.t0)
            try? await kubelet.clock.sleep(seconds: takes)
            let t = readFirst ? began : kubelet.clock.now().timeIntervalSince(kubelet.t0)
            lock.withLock { times.append(t) }
            if let answer { return answer }
            if let exit = kubelet.exitAfter, t >= exit { return gone }
            return .ran(t)
        }
    }

    /// Exits at once, or within the second: named (its age is never a second). Runs on: believed as soon as it
    /// has run a second by its own account (the busy kubelet's start report is that late already), not one round
    /// after the report.
    @Test(
        arguments: [
            (0.3, 0.0, true), (0.3, 1.0, true), (0.3, 3.0, false), (0.3, nil, false),
            (2.5, 0.0, true), (2.5, 1.0, true), (2.5, 3.0, false), (2.5, nil, false),
        ] as [(Double, Double?, Bool)])
    func believedOnceItRanASecondByItsOwnAccount(reportedAt: Double, exitAfter: Double?, named: Bool) async throws {
        let kubelet = try WaitEvidenceTests.Kubelet(reportedAt: reportedAt, exitAfter: exitAfter)
        let asked = Asked(kubelet)
        if named {
            await #expect {
                _ = try await kubelet.wait(uptime: asked)
            } throws: { e in
                ((e as? SoError)?.message ?? "").contains("pod ns/web-1 container c keeps crashing (CrashLoopBackOff)")
            }
            return
        }
        let took = try await kubelet.wait(uptime: asked)
        #expect(kubelet.report(at: took).1, "it was still reported running when believed")
        #expect(took >= ContainerEvidence.provenSeconds, "it had run a second")
        #expect(took <= max(reportedAt + 0.1, ContainerEvidence.provenSeconds + 0.2) + 0.001, "\(took)")
        #expect(took < reportedAt + ContainerEvidence.reportSeconds, "sooner than the kubelet's round")
        #expect(asked.asked.count <= 2, "\(asked.asked) \(reportedAt)")
    }

    /// A busy kubelet reports an exit seconds late: the runtime says at once that the container is gone, so it is
    /// not believed meanwhile (the kubelet's round alone believed it), and it is named once the kubelet reports it.
    @Test func oneTheRuntimeSaysIsGoneWaitsForTheLateKubelet() async throws {
        let kubelet = try WaitEvidenceTests.Kubelet(reportedAt: 0.3, exitAfter: 0.0)
        kubelet.exitReportLate = 5
        let asked = Asked(kubelet)
        await #expect {
            _ = try await kubelet.wait(uptime: asked)
        } throws: { e in
            ((e as? SoError)?.message ?? "").contains("pod ns/web-1 container c keeps crashing (CrashLoopBackOff)")
        }
        // Asked again about each second meanwhile, not in a loop.
        #expect((4...8).contains(asked.asked.count), "\(asked.asked)")
    }

    /// Nor when its asks fail in words not known here (a runtime's own for a container that is gone, as
    /// containerd's "no running task found" was): no evidence that it runs, so not believed by the round while it is
    /// asked, and the round counted from its last ask: a kubelet 2 s late still names it.
    @Test func oneWhoseAsksGoUnansweredIsNotBelievedByTheRound() async throws {
        let kubelet = try WaitEvidenceTests.Kubelet(reportedAt: 0.3, exitAfter: 0.0)
        kubelet.exitReportLate = 2
        let asked = Asked(kubelet, gone: .unanswered("error: a runtime's words for a task that is gone"))
        await #expect {
            _ = try await kubelet.wait(uptime: asked)
        } throws: { e in
            ((e as? SoError)?.message ?? "").contains("pod ns/web-1 container c keeps crashing (CrashLoopBackOff)")
        }
        // Asked a second apart, as many times as an unanswered start is given.
        #expect(asked.asked.count == ContainerEvidence.unansweredAtMost, "\(asked.asked)")
    }

    /// A container that runs on but whose asks go unanswered is believed by the kubelet's round once it has been
    /// asked `unansweredAtMost` times (a second apart): a cluster whose execs fail in unknown words still starts.
    @Test func oneThatRunsOnUnansweredIsBelievedAfterItsAsks() async throws {
        let kubelet = try WaitEvidenceTests.Kubelet(reportedAt: 0.3, exitAfter: nil)
        let asked = Asked(kubelet, answer: .unanswered("error: something else"))
        let took = try await kubelet.wait(uptime: asked)
        #expect(asked.asked.count == ContainerEvidence.unansweredAtMost, "\(asked.asked)")
        // One round after the last ask began (the exec took 0.1 s).
        let lastAsk = (asked.asked.last ?? 0) - 0.1
        let round = lastAsk + ContainerEvidence.reportSeconds
        #expect(took >= round - 0.001 && took < round + 0.25, "\(took) \(asked.asked)")
    }

    /// A container that said it had run less than a second and exits then is not believed by the round while its
    /// next answer is due, however slow the exec is to come back (a busy node): the next answer says it is gone.
    @Test func oneThatRanLessThanASecondWaitsForItsNextAnswer() async throws {
        let kubelet = try WaitEvidenceTests.Kubelet(reportedAt: 0.3, exitAfter: 0.8)
        kubelet.exitReportLate = 5
        let asked = Asked(kubelet, takes: 1.5, readFirst: true)
        await #expect {
            _ = try await kubelet.wait(uptime: asked)
        } throws: { e in
            ((e as? SoError)?.message ?? "").contains("pod ns/web-1 container c keeps crashing (CrashLoopBackOff)")
        }
        #expect(asked.asked.first.map { $0 < 0.8 } == true, "it said it ran: \(asked.asked)")
    }

    /// A container that cannot tell (no `cat`) is asked once and believed by the kubelet's round; where no
    /// container can be asked (no kubectl, no right to exec) the first answer stops the asking.
    @Test(arguments: [UptimeAnswer.cannotTell("no cat"), .unavailable("no kubectl")])
    func oneThatCannotTellIsBelievedByTheRound(answer: UptimeAnswer) async throws {
        let kubelet = try WaitEvidenceTests.Kubelet(reportedAt: 0.3, exitAfter: nil)
        let asked = Asked(kubelet, answer: answer)
        let took = try await kubelet.wait(uptime: asked)
        #expect(asked.asked.count == 1)
        #expect(took >= 0.3 + ContainerEvidence.reportSeconds && took < 0.3 + ContainerEvidence.reportSeconds + 0.25)
    }

    /// Only a young container without a readiness probe is asked (a probe, once it answers, says more), and none of a
    /// pod whose PID 1 is not the container's own (the host's processes, or its pod's shared).
    @Test func onlyContainersWithoutAProbeAndWithTheirOwnPID1AreAsked() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        try cluster.seed(WaiterTests.pod("plain", age: 0.2, probe: false, clock: clock))
        try cluster.seed(WaiterTests.pod("probed", age: 0.2, ready: false, probe: true, clock: clock))
        for key in ["hostPID", "shareProcessNamespace"] {
            var pod = WaiterTests.pod("shares-\(key)", age: 0.2, probe: false, clock: clock)
            pod.body = pod.body.map { entry in
                guard entry.0 == "spec", case .map(let spec) = entry.1 else { return entry }
                return ("spec", .map(spec + [(key, .bool(true))]))
            }
            try cluster.seed(pod)
        }
        let t = try TempDir("so-uptime-asked")
        defer { t.cleanup() }
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
            entropy: SeededEntropy(), console: CapturedConsole(), environment: [:], builtInRoot: nil)
        var waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
        waiter.uptime = KubectlUptime(processes: FakeProcessRunner(), kubectlFlags: [])
        var seen = ContainerEvidence()
        let health = waiter.containerHealth(try await waiter.listPods(), evidence: &seen)
        #expect(health.young.count == 4, "\(health.young)")
        #expect(health.ask.map(\.pod) == ["plain"])
    }

    /// The age of PID 1: seconds since boot less its start in ticks; its name may hold spaces and parentheses.
    @Test func theAgeOfTheFirstProcess() {
        let stat = { (comm: String, start: String) in
            "1 (\(comm)) S 0 1 1 0 -1 4194560 1000 0 0 0 5 3 0 0 20 0 1 0 \(start) 4247552 200 18446744073709551615"
        }
        let age = ProcessAge.seconds("5123.45 10200.00\n" + stat("sleep", "512300") + "\n")
        #expect(age.map { abs($0 - 0.45) < 1e-6 } == true)
        let spaced = ProcessAge.seconds("100.00 1.0\n" + stat("my (odd) init", "9850") + "\n")
        #expect(spaced.map { abs($0 - 1.5) < 1e-9 } == true)
        #expect(ProcessAge.seconds("") == nil)
        #expect(ProcessAge.seconds("100.00 1.0\n") == nil)
        #expect(ProcessAge.seconds("100.00 1.0\n" + stat("sh", "20000")) == nil, "started after the uptime read")
        #expect(ProcessAge.seconds("100.00 1.0\n7 (sh) S 0") == nil, "not PID 1")
        #expect(ProcessAge.seconds("cat: /proc/1/stat: No such file\n" + stat("sh", "1")) == nil)
    }

    /// kubectl exec of `cat /proc/uptime /proc/1/stat` in the container, through the cluster's flags; a refusal
    /// by RBAC or a missing kubectl stops the asking, any other failure is this container's alone: gone (in the
    /// kubelet's, containerd's or its shim's words), unable to tell (the command ran), or unanswered (other words, or
    /// an exec that hung).
    @Test func askedThroughKubectlExec() async {
        let runner = FakeProcessRunner()
        let flags = ["--kubeconfig", "/k", "--context", "c"]
        let args =
            ["kubectl"] + flags + ["-n", "ns", "exec", "p", "-c", "web", "--", "cat", "/proc/uptime", "/proc/1/stat"]
        let stat = "1 (sleep) S 0 1 1 0 -1 4194560 1000 0 0 0 5 3 0 0 20 0 1 0 1000 4247552 200 1"
        runner.expect(args, stdout: "12.50 3.0\n\(stat)\n")
        runner.expect(args, exitCode: 1, stderr: "error: unable to upgrade connection: container not found (\"web\")")
        // What a busy real node said of a container that had exited, the kubelet not knowing yet: containerd's task
        // gone, then its shim's (or runc's) word.
        let server = "error: Internal error occurred: Internal error occurred: error executing command in container: "
        let containerd =
            server
            + "failed to exec in container: failed to load task: no running task found: task 3ab31f not found: not found"
        runner.expect(args, exitCode: 1, stderr: containerd)
        let shim =
            server + "failed to exec in container: failed to start exec \"9f\": cannot exec in a stopped state: unknown"
        runner.expect(args, exitCode: 1, stderr: shim)
        // The command ran and could not answer: no cat in the image, or cat itself failed; or an exit 0 that is no age.
        let noCat =
            server
            + "failed to exec in container: failed to start exec \"db\": OCI runtime exec failed: exec failed: unable "
            + "to start container process: exec: \"cat\": executable file not found in $PATH: unknown"
        runner.expect(args, exitCode: 1, stderr: noCat)
        runner.expect(
            args, exitCode: 1,
            stderr: "cat: can't open '/proc/1/stat': Permission denied\ncommand terminated with exit code 1")
        runner.expect(args, stdout: "hello\n")
        // Words not known here: not evidence either way.
        runner.expect(
            args, exitCode: 1, stderr: "error: error sending request: Post \"https://10.0.0.1:10250/exec\": EOF")
        runner.expect(
            args, exitCode: 1,
            stderr:
                "Error from server (Forbidden): pods \"p\" is forbidden: User \"u\" cannot create resource \"pods/exec\""
        )
        let uptime = KubectlUptime(processes: runner, kubectlFlags: flags)
        #expect(await uptime.uptime(pod: "p", container: "web", namespace: "ns") == .ran(2.5))
        #expect(
            await uptime.uptime(pod: "p", container: "web", namespace: "ns")
                == .notRunning("error: unable to upgrade connection: container not found (\"web\")"))
        #expect(await uptime.uptime(pod: "p", container: "web", namespace: "ns") == .notRunning(containerd))
        #expect(await uptime.uptime(pod: "p", container: "web", namespace: "ns") == .notRunning(shim))
        #expect(await uptime.uptime(pod: "p", container: "web", namespace: "ns") == .cannotTell(noCat))
        #expect(
            await uptime.uptime(pod: "p", container: "web", namespace: "ns")
                == .cannotTell("command terminated with exit code 1"))
        guard case .cannotTell = await uptime.uptime(pod: "p", container: "web", namespace: "ns") else {
            Issue.record("an exit 0 that is no age cannot tell")
            return
        }
        guard case .unanswered(let unknown) = await uptime.uptime(pod: "p", container: "web", namespace: "ns") else {
            Issue.record("words not known here are no answer")
            return
        }
        #expect(unknown.hasPrefix("error: error sending request"))
        guard case .unavailable(let why) = await uptime.uptime(pod: "p", container: "web", namespace: "ns") else {
            Issue.record("a refusal by RBAC stops the asking")
            return
        }
        #expect(why.hasPrefix("Error from server (Forbidden)"))
        // An exec that hung past its timeout (a busy node) is no answer either; no kubectl stops the asking.
        runner.fallback = { _ in
            throw SoError("kubectl did not finish within 3 s and was stopped", hint: "run it by hand to see why")
        }
        #expect(
            await uptime.uptime(pod: "p", container: "web", namespace: "ns")
                == .unanswered("kubectl did not finish within 3 s and was stopped"))
        runner.missing = ["kubectl"]
        guard case .unavailable = await uptime.uptime(pod: "p", container: "web", namespace: "ns") else {
            Issue.record("no kubectl stops the asking")
            return
        }
        #expect(runner.unexpected.isEmpty && runner.pending.isEmpty)
    }
}
