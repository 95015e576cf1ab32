import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// A young container without a probe is believed once its own first process says it has run a second, sooner than
/// the kubelet's next round; one that cannot say (dead, no `cat`, no exec) is believed by the round, as before.
@Suite struct ContainerUptimeTests {
    /// The container of `WaitEvidenceTests.Kubelet`, asked through an exec that takes 0.1 s of the test clock:
    /// it answers its age (it started at t0) while it runs, and cannot tell once it exited. `answer` overrides.
    final class Asked: ContainerUptime, @unchecked Sendable {
        let kubelet: WaitEvidenceTests.Kubelet
        let answer: UptimeAnswer?
        private let lock = NSLock()
        private var times: [Double] = []
        var asked: [Double] { lock.withLock { times } }
        init(_ kubelet: WaitEvidenceTests.Kubelet, answer: UptimeAnswer? = nil) {
            self.kubelet = kubelet
            self.answer = answer
        }
        func uptime(pod: String, container: String, namespace: String) async -> UptimeAnswer {
            #expect(pod == "web-1" && container == "c" && namespace == "ns")
            try? await kubelet.clock.sleep(seconds: 0.1)
            let t = kubelet.clock.now().timeIntervalSince(kubelet.t0)
            lock.withLock { times.append(t) }
            if let answer { return answer }
            if let exit = kubelet.exitAfter, t >= exit { return .notRunning("container not found") }
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
    /// by RBAC or a missing kubectl stops the asking, any other failure is this container's alone.
    @Test func askedThroughKubectlExec() async {
        let runner = FakeProcessRunner()
        let flags = ["--kubeconfig", "/k", "--context", "c"]
        let args =
            ["kubectl"] + flags + ["-n", "ns", "exec", "p", "-c", "web", "--", "cat", "/proc/uptime", "/proc/1/stat"]
        let stat = "1 (sleep) S 0 1 1 0 -1 4194560 1000 0 0 0 5 3 0 0 20 0 1 0 1000 4247552 200 1"
        runner.expect(args, stdout: "12.50 3.0\n\(stat)\n")
        runner.expect(args, exitCode: 1, stderr: "error: unable to upgrade connection: container not found (\"web\")")
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
        guard case .unavailable(let why) = await uptime.uptime(pod: "p", container: "web", namespace: "ns") else {
            Issue.record("a refusal by RBAC stops the asking")
            return
        }
        #expect(why.hasPrefix("Error from server (Forbidden)"))
        runner.missing = ["kubectl"]
        guard case .unavailable = await uptime.uptime(pod: "p", container: "web", namespace: "ns") else {
            Issue.record("no kubectl stops the asking")
            return
        }
        #expect(runner.unexpected.isEmpty && runner.pending.isEmpty)
    }
}
