import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// `exec`, `shell` and the task verbs on a workspace whose container an earlier verb found cost one `kubectl exec`
/// and no request to the API server; a pod that is gone is looked up again and the command run once more.
@Suite(.serialized) struct KnownContainerTests {
    func exec(_ g: GitWorkspace, _ command: [String]) async throws -> Int32 {
        try await ObserveAction(g.w.ctx).exec(
            g.dir, cluster: g.w.clusterOptions, service: command[0], command: Array(command.dropFirst()),
            interactive: false, tty: false)
    }

    func prefix(_ g: GitWorkspace, pod: String) -> [String] {
        [
            "kubectl", "--kubeconfig", g.w.h.path("kubeconfig"), "--context", "kind-test", "-n", "ws", "exec", pod,
            "-c", "agent", "--",
        ]
    }

    @Test func aKnownContainerCostsOneKubectlExecAndNoRequest() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let (cluster, processes) = (g.w.cluster, g.w.h.processes)
        let pod = "\(g.id)-agent-abc"
        // The first verb reads the pods (the Deployments' and the Jobs') and keeps where the container runs.
        var requests = cluster.calls.count
        processes.expect(prefix(g, pod: pod) + HandedCredentials.wrap(["true"]))
        #expect(try await exec(g, ["true"]) == 0)
        #expect(cluster.calls.count - requests == 2, "\(cluster.calls[requests...])")
        let kept = try #require(KnownContainer.read(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions))
        #expect(kept.pod == pod && kept.namespace == "ws" && kept.container == "agent" && kept.path == "/workspace")
        // The next ones: no request, one process each (exec, shell, and the task verbs alike).
        requests = cluster.calls.count
        var spawned = processes.calls.count
        processes.expect(prefix(g, pod: pod) + HandedCredentials.wrap(["true"]))
        #expect(try await exec(g, ["true"]) == 0)
        processes.expect(prefix(g, pod: pod) + HandedCredentials.wrap(["git", "status"]))
        #expect(try await exec(g, ["agent", "git", "status"]) == 0)
        _ = try await TaskQueueAction(g.w.ctx).list(g.dir, cluster: g.w.clusterOptions)
        _ = try await WorkspaceGitAction(g.w.ctx).state(g.dir, cluster: g.w.clusterOptions)
        // shell names no service: the known container is the one it opens (the stack's first service, agent).
        let script =
            "cd /workspace 2>/dev/null || true; if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"
        processes.expect(
            Array(prefix(g, pod: pod).prefix(8)) + ["-i", pod, "-c", "agent", "--"]
                + HandedCredentials.wrap(["sh", "-c", script]))
        #expect(try await ObserveAction(g.w.ctx).shell(g.dir, cluster: g.w.clusterOptions, service: nil) == 0)
        #expect(cluster.calls.count == requests, "\(cluster.calls[requests...])")
        #expect(processes.calls.count - spawned == 5, "\(processes.calls[spawned...].map(\.arguments))")
        #expect(processes.pending.isEmpty && processes.unexpected.isEmpty)
        // The pod replaced (a restart): kubectl says the known one is gone, the pods are read, and the command
        // runs once more in the new one, which the verbs after it use.
        cluster.remove("Pod", pod, namespace: "ws")
        try cluster.seed(AgentPod.running(id: g.id, namespace: "ws", name: "\(g.id)-agent-new"))
        let new = "\(g.id)-agent-new"
        processes.expect(
            prefix(g, pod: pod) + HandedCredentials.wrap(["true"]), exitCode: 1,
            stderr: "Error from server (NotFound): pods \"\(pod)\" not found")
        processes.expect(prefix(g, pod: new) + HandedCredentials.wrap(["true"]))
        #expect(try await exec(g, ["true"]) == 0)
        #expect(g.w.h.console.stderr.contains("pod \(pod) is gone"), "\(g.w.h.console.stderr)")
        #expect(KnownContainer.read(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions)?.pod == new)
        // A command's own exit 1, in the known pod that still runs, is its answer: looked at, never run twice.
        processes.expect(prefix(g, pod: new) + HandedCredentials.wrap(["false"]), exitCode: 1)
        #expect(try await exec(g, ["false"]) == 1)
        #expect(processes.pending.isEmpty && processes.unexpected.isEmpty, "\(processes.pending)")
        // Then no request again.
        requests = cluster.calls.count
        spawned = processes.calls.count
        processes.expect(prefix(g, pod: new) + HandedCredentials.wrap(["true"]))
        #expect(try await exec(g, ["true"]) == 0)
        #expect(cluster.calls.count == requests && processes.calls.count - spawned == 1)
    }

    /// Where the cluster's client can exec itself (through the API server), a known container's command runs there:
    /// no kubectl, no other request. Its output is shown as it comes; a pod that is gone, told in kubectl's words,
    /// is looked up and the command runs once more in the new one; `SO_EXEC=kubectl` runs kubectl.
    @Test func aKnownContainerRunsThroughTheAPIServerWhenTheClientCan() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let (cluster, processes) = (g.w.cluster, g.w.h.processes)
        let pod = "\(g.id)-agent-abc"
        processes.expect(prefix(g, pod: pod) + HandedCredentials.wrap(["true"]))
        #expect(try await exec(g, ["true"]) == 0)
        var (requests, spawned) = (cluster.calls.count, processes.calls.count)
        cluster.execOutcomes = [ExecOutcome(exitCode: 3, stdout: Data("hello\n".utf8))]
        #expect(try await exec(g, ["agent", "sh", "-c", "echo hello; exit 3"]) == 3)
        #expect(
            Array(cluster.calls[requests...])
                == [
                    "exec ws/\(pod)/agent: "
                        + HandedCredentials.wrap(["sh", "-c", "echo hello; exit 3"]).joined(separator: " ")
                ])
        #expect(processes.calls.count == spawned && g.w.h.console.stdout.contains("hello"))
        // The pod replaced: the API server's NotFound, and the command runs in the new pod.
        cluster.remove("Pod", pod, namespace: "ws")
        let new = "\(g.id)-agent-new"
        try cluster.seed(AgentPod.running(id: g.id, namespace: "ws", name: new))
        cluster.execOutcomes = [
            ExecOutcome.refused(
                status: 404,
                body: Data(#"{"kind":"Status","reason":"NotFound","message":"pods \"\#(pod)\" not found"}"#.utf8)),
            ExecOutcome(exitCode: 0),
        ]
        requests = cluster.calls.count
        #expect(try await exec(g, ["true"]) == 0)
        let execs = cluster.calls[requests...].filter { $0.hasPrefix("exec ") }
        #expect(execs.count == 2 && execs.last?.hasPrefix("exec ws/\(new)/agent: ") == true, "\(execs)")
        #expect(processes.calls.count == spawned && g.w.h.console.stderr.contains("pod \(pod) is gone"))
        // SO_EXEC=kubectl: kubectl, with the outcome the client holds untouched.
        var ctx = g.w.ctx
        ctx.environment["SO_EXEC"] = "kubectl"
        cluster.execOutcomes = [ExecOutcome(exitCode: 9)]
        processes.expect(prefix(g, pod: new) + HandedCredentials.wrap(["true"]))
        #expect(
            try await ObserveAction(ctx).exec(
                g.dir, cluster: g.w.clusterOptions, service: "true", command: [], interactive: false, tty: false) == 0)
        #expect(cluster.execOutcomes.count == 1 && processes.pending.isEmpty && processes.unexpected.isEmpty)
    }

    /// A task verb's script (captured) in a pod that is gone: kubectl's words say the script never ran, so the pod
    /// is looked up and the script runs in the new one; no pod at all is the usual "not running".
    @Test func aTaskVerbFollowsThePodToItsNewName() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let old = "\(g.id)-agent-abc"
        _ = try await TaskQueueAction(g.w.ctx).list(g.dir, cluster: g.w.clusterOptions)
        g.w.cluster.remove("Pod", old, namespace: "ws")
        try g.w.cluster.seed(AgentPod.running(id: g.id, namespace: "ws", name: "\(g.id)-agent-new"))
        // kubectl exec into a pod the cluster does not hold fails as kubectl does.
        let (fallback, cluster) = (g.w.h.processes.fallback, g.w.cluster)
        g.w.h.processes.fallback = { args in
            if let at = args.firstIndex(of: "exec"), cluster.object("Pod", args[at + 1], namespace: "ws") == nil {
                return ProcessResult(
                    exitCode: 1, stderr: "Error from server (NotFound): pods \"\(args[at + 1])\" not found")
            }
            return try await fallback?(args)
        }
        let requests = g.w.cluster.calls.count
        #expect(try await TaskQueueAction(g.w.ctx).list(g.dir, cluster: g.w.clusterOptions).isEmpty)
        #expect(g.w.cluster.calls.count - requests == 1, "one look: \(g.w.cluster.calls[requests...])")
        let execs = g.w.h.processes.calls.map(\.arguments).filter { $0.contains("exec") }.suffix(2)
        #expect(execs.map { $0.contains(old) } == [true, false])
        // A task's log followed (-f) in a pod that is gone: looked up, and followed in the new one.
        var req = TaskRequest(directory: g.dir, text: "t")
        req.command = "echo followed"
        req.push = false
        req.cluster = g.w.clusterOptions
        let id = try await TaskQueueAction(g.w.ctx).submit(req).id
        _ = try await TaskQueueAction(g.w.ctx).wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        var stale = try #require(KnownContainer.read(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions))
        stale.pod = old
        stale.write(g.w.ctx, directory: g.dir)
        let t = try await TaskQueueAction(g.w.ctx).logs(g.dir, cluster: g.w.clusterOptions, id: id, follow: true)
        #expect(
            t.state == "succeeded" && g.w.h.console.stdout.split(separator: "\n").contains("followed"),
            "\(g.w.h.console.stdout)")
        g.w.cluster.remove("Pod", "\(g.id)-agent-new", namespace: "ws")
        await #expect {
            try await TaskQueueAction(g.w.ctx).list(g.dir, cluster: g.w.clusterOptions)
        } throws: { e in
            (e as? SoError)?.message == "ws's agent container is not running"
        }
        #expect(KnownContainer.read(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions) == nil)
    }

    /// What the record says is believed only under the same cluster choice and the same spec.
    @Test func anotherClusterChoiceLooksAgain() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        _ = try await TaskQueueAction(g.w.ctx).list(g.dir, cluster: g.w.clusterOptions)
        #expect(KnownContainer.read(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions) != nil)
        var other = g.w.clusterOptions
        other.context = "kind-other"
        #expect(KnownContainer.read(g.w.ctx, directory: g.dir, cluster: other) == nil)
        var ctx = g.w.ctx
        ctx.environment["KUBECONFIG"] = "/elsewhere"
        #expect(KnownContainer.read(ctx, directory: g.dir, cluster: g.w.clusterOptions) == nil)
        try g.w.h.tmp.write("so-home/deployments/ws/.so-container.json", "{not json")
        #expect(KnownContainer.read(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions) == nil)
    }
}

/// Idle tracking with a known container: the exact time of each use is in the container (the prelude's marker,
/// which `cleanup --idle` reads there); the Namespace's record is written at most once a minute.
@Suite struct KnownContainerIdleTests {
    @Test func aUseIsRecordedOnTheNamespaceAtMostOnceAMinute() async throws {
        let w = try WorkspaceHarness()
        try await IdleTests().up(w, "nap", idle: "1h")
        try IdleTests().podRuns(w, "nap")
        let dir = w.h.path("so-home/deployments/nap")
        _ = try await WorkspaceContainer.open(w.ctx, directory: dir, cluster: w.clusterOptions)
        let first = w.cluster.object("Namespace", "nap")?.annotations["so.dev/last-used"]
        #expect(first == Timestamps.rfc3339(w.clock.now()))
        var requests = w.cluster.calls.count
        try await w.clock.sleep(seconds: 30)
        _ = try await WorkspaceContainer.open(w.ctx, directory: dir, cluster: w.clusterOptions)
        #expect(w.cluster.calls.count == requests, "\(w.cluster.calls[requests...])")
        try await w.clock.sleep(seconds: 31)
        requests = w.cluster.calls.count
        _ = try await WorkspaceContainer.open(w.ctx, directory: dir, cluster: w.clusterOptions)
        #expect(w.cluster.calls[requests...].map { String($0.split(separator: " ")[0]) } == ["patch"])
        #expect(
            w.cluster.object("Namespace", "nap")?.annotations["so.dev/last-used"] == Timestamps.rfc3339(w.clock.now()))
    }

    /// A process that only reads the tasks (the dashboard's `task.sh report`) is not an open shell; others are.
    @Test func aReaderOfTheTasksIsNotAUse() async throws {
        func reader(_ cmdline: String) async throws -> Bool {
            try await LocalProcessRunner().run(
                ["sh", "-c", "case \"$1\" in \(IdleAction.readerPattern)) echo reader ;; esac", "so", cmdline],
                workingDirectory: nil, environment: nil, timeout: 30
            ).stdout == "reader\n"
        }
        #expect(try await reader("sh /workspace/.git/so/task.sh report /workspace "))
        #expect(try await reader("sh /workspace/.git/so/task.sh report /workspace 3 "))
        #expect(try await !reader("sh /workspace/.git/so/task.sh worker /workspace "))
        #expect(try await !reader("bash -l "))
        #expect(try await !reader("sh -c sleep 60 report "))
    }

    /// The busy look's last question, run for real over a /proc of its own: a process the API started (its parent
    /// outside the container: ppid 0) keeps the workspace, but not one that has ended and waits for the runtime to
    /// reap it (seen in CI as "Zs [sh] <defunct>", with no command line), nor the kubelet running an exec probe.
    @Test func anEndedExecAndAProbeAreNotAnOpenShell() async throws {
        let tmp = try TempDir()
        defer { tmp.cleanup() }
        let probe = ["/bin/sh", "-c", "w=/tmp/so-clone-wait; until [ -e /tmp/so-clone-done ]; do sleep 0.1; done"]
        let pod = try JSON.parse(
            Data(
                (#"{"spec":{"containers":[{"name":"proxy"},{"name":"agent","readinessProbe":{"exec":{"command":"#
                    + #"["/bin/sh","-c","w=/tmp/so-clone-wait; until [ -e /tmp/so-clone-done ]; do sleep 0.1; done"]}}}]}}"#)
                    .utf8))
        let lines = IdleAction.probeCommandLines(pod, container: "agent")
        #expect(lines == [probe.map { $0 + " " }.joined()])
        #expect(IdleAction.probeCommandLines(pod, container: "proxy").isEmpty)
        func process(_ pid: Int, _ state: String, ppid: Int, _ argv: [String]) throws {
            try tmp.write(
                "proc/\(pid)/stat",
                "\(pid) (\(argv.first.map { Path.basename($0) } ?? "sh")) \(state) \(ppid) 1 1 0 -1\n")
            try tmp.write("proc/\(pid)/cmdline", argv.map { $0 + "\u{0}" }.joined())
        }
        try process(1, "S", ppid: 0, ["sh", "/opt/so/clone.sh", "sleep", "infinity"])
        try process(7, "S", ppid: 1, ["sleep", "infinity"])
        try process(12, "Z", ppid: 0, [])
        try process(13, "S", ppid: 0, probe)
        try process(14, "S", ppid: 13, ["sleep", "0.1"])
        let script = IdleAction.busyScript.replacingOccurrences(of: "/proc", with: tmp.file("proc"))
            .replacingOccurrences(of: HandedCredentials.marker, with: tmp.file("no-marker"))
        func look() async throws -> String {
            try await LocalProcessRunner().run(
                ["sh", "-c", script, "so", tmp.file("no-checkout"), "60"] + lines, workingDirectory: nil,
                environment: nil, timeout: 30
            ).stdout
        }
        #expect(try await look() == "", "an ended exec and a probe are no use")
        try process(15, "S", ppid: 0, ["bash", "-l"])
        #expect(try await look() == "a shell or exec is open in it (bash -l )\n")
    }

    /// The busy look's first question, run for real: a verb in the container less than `idle` ago keeps it.
    @Test func theMarkerInTheContainerKeepsARecentlyUsedWorkspace() async throws {
        let tmp = try TempDir()
        let marker = tmp.file("so-last-used")
        defer { tmp.cleanup() }
        let script = IdleAction.busyScript.replacingOccurrences(of: HandedCredentials.marker, with: marker)
        func look(_ idle: Int) async throws -> String {
            try await LocalProcessRunner().run(
                ["sh", "-c", script, "so", tmp.file("no-checkout"), String(idle)], workingDirectory: nil,
                environment: nil, timeout: 30
            ).stdout
        }
        try tmp.write("so-last-used", "")
        #expect(try await look(3600).hasPrefix("used "), "a use just now")
        let old = Date().addingTimeInterval(-7200)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: marker)
        #expect(!(try await look(3600)).hasPrefix("used "), "a use two hours ago is not one within the hour")
        #expect(try await look(9000).hasPrefix("used "), "but is within 2.5 hours")
    }
}
