import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// What only running pods show, against a cluster whose node runs containers (`../shared/tools/real-node`,
/// or kind): `SO_E2E_KUBECONFIG` names it and `SO_E2E_REAL_NODE=1` says its pods execute (`.ci/run` sets
/// both when it started the kit). Reported as skipped otherwise — the stand-in node only marks pods Running.
enum RealNode {
    static let enabled = E2E.kubeconfig != nil && ProcessInfo.processInfo.environment["SO_E2E_REAL_NODE"] == "1"
    /// A suite's trait: run on such a node, else reported skipped, saying why.
    static var required: ConditionTrait {
        .enabled(if: enabled, "SO_E2E_KUBECONFIG with SO_E2E_REAL_NODE=1 is not set: no node that runs containers")
    }
    static let stacks = Path.join(RepoPaths.root, "Tests/SoCLITests/E2EStacks")

    /// A deployment of one of the stacks under E2EStacks/, created in `t` as `dep` (`appendToSpec`: spec keys added first).
    @discardableResult
    static func deploy(_ stack: String, in t: TempDir, appendToSpec: String = "") async throws -> String {
        var r = try await E2E.so(
            ["--stack", Path.join(stacks, stack), "deploy", "init", "--output", "spec.yml"], cwd: t.path)
        guard r.exitCode == 0 else { throw SoError("deploy init \(stack): \(r.stderr)") }
        if !appendToSpec.isEmpty { try t.write("spec.yml", try t.read("spec.yml") + appendToSpec) }
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        guard r.exitCode == 0 else { throw SoError("deploy create \(stack): \(r.stderr)") }
        return try t.read("dep/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }!.split(
            separator: " ")[1].description
    }

    static var kc: [String] { ["--kubeconfig", E2E.kubeconfig!] }

    static func remove(_ t: TempDir) async {
        _ = try? await E2E.so(
            ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace", "--timeout", "60"] + kc,
            cwd: t.path)
    }

    /// The last lines of `service`'s log in `t`'s deployment, polled (every 2 s, up to a minute) until they hold `text`.
    static func log(of service: String, in t: TempDir, until text: String, tail: Int = 5) async throws -> String {
        var seen = ""
        for _ in 0..<30 {
            seen = try await E2E.so(
                ["deployment", "--dir", "dep", "logs", service, "--tail", "\(tail)"] + kc, cwd: t.path
            ).stdout
            if seen.contains(text) { break }
            try await Task.sleep(nanoseconds: 2_000_000_000)
        }
        return seen
    }

    /// Runs `body`, then removes the deployment of `t` whether it passed or threw.
    static func removing(_ t: TempDir, _ body: () async throws -> Void) async throws {
        do { try await body() } catch {
            await remove(t)
            throw error
        }
        await remove(t)
    }
}

@Suite(
    .serialized,
    RealNode.required
)
struct RealNodeE2ETests {
    /// A pod no node has room for, on a cluster that cannot add nodes (the kit's one bare node): named within
    /// seconds with what it requests and what the node has, not at --timeout.
    @Test func anUnschedulablePodIsNamedWithinSeconds() async throws {
        let t = try TempDir("so-e2e-unschedulable")
        defer { t.cleanup() }
        try await RealNode.deploy(
            "egress-none", in: t,
            appendToSpec:
                "resources:\n  containers:\n    reservations: {cpus: '64', memory: 64M}\n    limits: {cpus: '64', memory: 128M}\n"
        )
        try await RealNode.removing(t) {
            let began = Date()
            let r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "120", "--progress", "plain"] + RealNode.kc,
                cwd: t.path)
            let took = Date().timeIntervalSince(began)
            #expect(r.exitCode == 1 && took < 30, "exit \(r.exitCode) after \(Int(took)) s: \(r.stderr)")
            #expect(
                r.stderr.contains("cannot be scheduled") && r.stderr.contains("Insufficient cpu")
                    && r.stderr.contains("requests cpu 64")
                    && r.stderr.contains("so-node has cpu") && r.stderr.contains("lower resources: in"), "\(r.stderr)")
        }
    }

    /// Compose names resolve across services (a Service per service, headless where no port is known);
    /// logs, exec with its exit code, and port-forward reach the real containers.
    @Test func servicesReachEachOtherByNameAndTheVerbsReachContainers() async throws {
        let t = try TempDir("so-e2e-names")
        defer { t.cleanup() }
        _ = try await RealNode.deploy("names", in: t)
        // Removed before the test ends (a Task in a defer ran after the temp dir was gone, leaking the namespace).
        try await RealNode.removing(t) {
            var r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "120", "--progress", "plain"] + RealNode.kc,
                cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")

            // client fetches http://web:8080 (exposed) and http://api:8081 (no port declared) by name.
            let seen = try await RealNode.log(of: "client", in: t, until: "got hello-from-web hello-from-api")
            #expect(seen.contains("got hello-from-web hello-from-api"), "client's log: \(seen)")

            r = try await E2E.so(["deployment", "--dir", "dep", "logs", "web"] + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0 && r.stdout.contains("web-started"), "\(r.stdout)\n\(r.stderr)")

            r = try await E2E.so(
                ["deployment", "--dir", "dep", "exec", "web"] + RealNode.kc + [
                    "--", "sh", "-c", "cat /www/index.html; exit 7",
                ], cwd: t.path)
            #expect(
                r.exitCode == 7 && r.stdout.contains("hello-from-web"), "exit \(r.exitCode): \(r.stdout)\n\(r.stderr)")

            // port-forward serves a request from this host (through kubectl), until it is stopped.
            let port = 18000 + Int.random(in: 0..<1000)
            let forward = Process()
            forward.executableURL = URL(fileURLWithPath: E2E.binary)
            forward.arguments = ["deployment", "--dir", "dep", "port-forward", "web", "\(port):8080"] + RealNode.kc
            forward.currentDirectoryURL = URL(fileURLWithPath: t.path)
            forward.standardOutput = FileHandle.nullDevice
            forward.standardError = FileHandle.nullDevice
            try forward.run()
            defer { kill(forward.processIdentifier, SIGKILL) }  // Process.terminate() left kubectl running here
            var body = ""
            for _ in 0..<20 {
                try await Task.sleep(nanoseconds: 500_000_000)
                let curl = try await LocalProcessRunner().run(
                    ["curl", "-s", "--max-time", "3", "http://127.0.0.1:\(port)/"], workingDirectory: nil,
                    environment: nil, timeout: 10)
                body = curl.stdout
                if body.contains("hello-from-web") { break }
            }
            #expect(body.contains("hello-from-web"), "port-forward answered: \(body)")
        }
    }

    /// An image that cannot be pulled is named, with the kubelet's reason, within the wait.
    @Test func aMissingImageIsNamedWithinTheWait() async throws {
        let t = try TempDir("so-e2e-image")
        defer { t.cleanup() }
        _ = try await RealNode.deploy("missing-image", in: t)
        // Removed before the test ends (a Task in a defer ran after the temp dir was gone, leaking the namespace).
        try await RealNode.removing(t) {
            let began = Date()
            let r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "90", "--progress", "plain"] + RealNode.kc,
                cwd: t.path)
            #expect(r.exitCode != 0)
            #expect(r.stderr.contains("localhost/so-e2e-no-such-image:1"), "\(r.stderr)")
            #expect(r.stderr.contains("ErrImagePull") || r.stderr.contains("ImagePullBackOff"), "\(r.stderr)")
            #expect(Date().timeIntervalSince(began) < 90, "named only after the whole wait")
        }
    }

    /// A spec `namespace:` that names a namespace someone else made: a stop that deletes namespaces deletes
    /// the deployment's objects and keeps the namespace, with what others put in it, saying so.
    @Test func aNamespaceSoDidNotMakeKeepsWhatOthersPutInIt() async throws {
        let t = try TempDir("so-e2e-theirs")
        defer { t.cleanup() }
        let ns = "so-e2e-theirs-\(UInt32.random(in: 0...UInt32.max))"
        // Deleted by the test in every case: the namespace is not so's.
        var failure: Error?
        do {
            #expect(try await E2E.kubectl(["create", "namespace", ns]).exitCode == 0)
            #expect(
                try await E2E.kubectl(["-n", ns, "create", "configmap", "theirs", "--from-literal=a=b"]).exitCode == 0)
            _ = try await RealNode.deploy("egress-none", in: t, appendToSpec: "namespace: \(ns)\n")
            var r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--no-wait", "--progress", "plain"] + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stderr)")
            r = try await E2E.so(
                ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace", "--timeout", "60"]
                    + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stderr)")
            #expect(
                r.stderr.contains("namespace \(ns) was kept") && r.stderr.contains("ConfigMap theirs"), "\(r.stderr)")
            #expect(try await E2E.kubectl(["-n", ns, "get", "configmap", "theirs", "-o", "name"]).exitCode == 0)
            let left = try await E2E.kubectl(["-n", ns, "get", "deployments,services,pods", "-o", "name"])
            #expect(left.exitCode == 0 && left.stdout.isEmpty, "\(left.stdout)")
        } catch { failure = error }
        _ = try? await E2E.kubectl(["delete", "namespace", ns, "--wait=false"])
        if let failure { throw failure }
    }

    /// A bind of a directory the stack does not have is a volume under the deployment directory (a hostPath
    /// PersistentVolume and a claim bound to it by name). What a container writes there is still there after
    /// `stop --delete-namespace` (volumes kept) and a start that makes the namespace and the claim anew: the
    /// volume goes out before its claim, and the kept one is released to the new claim (it had stayed Pending).
    @Test func aPathVolumeKeepsItsFilesAcrossANewNamespace() async throws {
        let t = try TempDir("so-e2e-binds")
        defer { t.cleanup() }
        // deploy-to k8s: the volume is the deployment directory's own data/app-data on this host, the node's.
        let id = try await RealNode.deploy("binds", in: t)
        try t.write(
            "dep/spec.yml",
            try t.read("dep/spec.yml").replacingOccurrences(
                of: "deploy-to: k8s-kind", with: "deploy-to: k8s\nkube-config: \(E2E.kubeconfig!)\nvolume-node: so-node"
            ))
        try await RealNode.removing(t) {
            func start() async throws {
                let r = try await E2E.so(
                    ["deployment", "--dir", "dep", "start", "--timeout", "60", "--progress", "plain"] + RealNode.kc,
                    cwd: t.path)
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            }
            func inVolume(_ command: String) async throws -> String {
                try await E2E.so(
                    ["deployment", "--dir", "dep", "exec", "web"] + RealNode.kc + ["--", "sh", "-c", command],
                    cwd: t.path
                ).stdout
            }
            try await start()
            _ = try await inVolume("echo kept-$$ > /var/lib/app-data/mark; cat /var/lib/app-data/mark")
            let written = try t.read("dep/data/host-path-data-app-data/mark")
            #expect(written.hasPrefix("kept-"), "the container's file on this host: \(written)")
            var r = try await E2E.so(
                ["deployment", "--dir", "dep", "stop", "--delete-namespace", "--timeout", "60"] + RealNode.kc,
                cwd: t.path)
            #expect(r.exitCode == 0 && r.stdout.contains("volumes kept"), "\(r.stdout)\n\(r.stderr)")
            try await start()
            #expect(try await inVolume("cat /var/lib/app-data/mark") == written)
            r = try await E2E.kubectl(["-n", id, "get", "pvc", "-o", "jsonpath={.items[*].status.phase}"])
            #expect(r.stdout == "Bound", "\(r.stdout)")
        }
        let pvs = try await E2E.kubectl(["get", "pv", "-l", "app=\(id)", "-o", "name"]).stdout
        #expect(pvs.isEmpty, "\(pvs)")
    }

    /// A container that keeps crashing is named with its last log lines.
    @Test func aCrashingContainerIsNamedWithItsLastLogLines() async throws {
        let t = try TempDir("so-e2e-crash")
        defer { t.cleanup() }
        _ = try await RealNode.deploy("crash", in: t)
        // Removed before the test ends (a Task in a defer ran after the temp dir was gone, leaking the namespace).
        try await RealNode.removing(t) {
            let r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "90", "--progress", "plain"] + RealNode.kc,
                cwd: t.path)
            #expect(r.exitCode != 0)
            #expect(r.stderr.contains("crasher") && r.stderr.contains("CrashLoopBackOff"), "\(r.stderr)")
            #expect(r.stderr.contains("crash-line-two"), "\(r.stderr)")
        }
    }

    /// The wait believes what the cluster reports, not a settle: a container that exits at once is named
    /// with its last log lines; one that exits after 1, 3 or 6 s is named by the wait when the kubelet
    /// reports the exit before the wait believes it, and otherwise the start said only what was true when it
    /// ended (it was running) and `status` names the crash after. Four deployments at once.
    @Test func aContainerThatExitsIsNamedByTheWaitOrByStatusAfter() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for after in [0, 1, 3, 6] {
                group.addTask {
                    let t = try TempDir("so-e2e-exit-after-\(after)")
                    defer { t.cleanup() }
                    _ = try await RealNode.deploy(
                        "exit-after", in: t, appendToSpec: "config:\n  EXIT_AFTER: \"\(after)\"\n")
                    try await RealNode.removing(t) { try await Self.exitIsNamed(after: after, in: t) }
                }
            }
            try await group.waitForAll()
        }
    }

    static func exitIsNamed(after: Int, in t: TempDir) async throws {
        let r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--timeout", "120", "--progress", "plain"] + RealNode.kc,
            cwd: t.path)
        if after == 0 { #expect(r.exitCode == 1, "\(r.stdout)\n\(r.stderr)") }
        if r.exitCode != 0 {
            #expect(
                r.stderr.contains("container quitter keeps crashing")
                    && r.stderr.contains("exiting-after-\(after)"), "\(after): \(r.stderr)")
            return
        }
        var status = ""
        for _ in 0..<30 {
            status = try await E2E.so(["deployment", "--dir", "dep", "status"] + RealNode.kc, cwd: t.path).stdout
            if status.contains("not ready") { break }
            try await Task.sleep(for: .seconds(2))
        }
        #expect(status.contains("not ready") && status.contains("quitter"), "\(after): \(status)")
    }

    /// laconic's test stack runs for real: its Deployment is available, its Job completed and printed its
    /// output, and the test container says it started with the spec's config.
    @Test(
        .enabled(
            if: LocalFileSystem().isFile(Path.join(RepoPaths.laconicStacks, "stacks/test/stack.yml")),
            "../shared/fixtures/laconic-stacks is absent"))
    func theLaconicTestStackRunsAndItsJobCompletes() async throws {
        let t = try TempDir("so-e2e-test-stack")
        defer { t.cleanup() }
        let laconic = Path.join(RepoPaths.laconicStacks, "stacks/test")
        var r = try await E2E.so(
            ["--stack", laconic, "deploy", "init", "--output", "spec.yml", "--config", "CERC_TEST_PARAM_1=PASSED"],
            cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        // Removed before the test ends (a Task in a defer ran after the temp dir was gone, leaking the namespace).
        try await RealNode.removing(t) {
            let id = try t.read("dep/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }!
                .split(separator: " ")[1].description
            r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "120", "--progress", "plain"] + RealNode.kc,
                cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            let available = try await E2E.kubectl([
                "-n", id, "get", "deployment", "\(id)-deployment", "-o", "jsonpath={.status.availableReplicas}",
            ]).stdout
            #expect(available == "1")
            // start returned once the Job's own status said Complete: kubectl wait --timeout=0s sees it at once.
            let pod = try await E2E.kubectl([
                "-n", id, "get", "pods", "-l", "job-name=\(id)-job-test-job", "-o",
                "jsonpath={.items[*].status.containerStatuses[*].state.terminated.exitCode}",
            ]).stdout
            #expect(pod == "0")
            #expect(try await E2E.jobCompletes("\(id)-job-test-job", in: id))
            r = try await E2E.so(["deployment", "--dir", "dep", "logs"] + RealNode.kc, cwd: t.path)
            #expect(r.stdout.contains("CERC_TEST_PARAM_1=PASSED"), "\(r.stdout)\n\(r.stderr)")
        }
    }
}
