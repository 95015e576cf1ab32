import Foundation
import Testing
@testable import SoActions
import SoBasics
import SoKube
import SoStack
import SoTestSupport

/// A deployment directory plus a fake API server that marks Deployments available and Jobs complete.
struct ClusterHarness {
    let h: Harness
    let cluster: FakeCluster
    let ctx: SoContext
    var kubeconfig: String { h.path("kubeconfig") }
    var options: ClusterOptions { ClusterOptions(kubeconfig: kubeconfig, performClusterManagement: false) }

    static let kubeconfigText = """
    apiVersion: v1
    kind: Config
    current-context: kind-test
    clusters:
    - name: kind-test
      cluster:
        server: https://127.0.0.1:6443
        certificate-authority-data: \(Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8).base64EncodedString())
    users:
    - name: kind-test
      user:
        token: not-a-real-token
    contexts:
    - name: kind-test
      context: {cluster: kind-test, user: kind-test}
    """

    init(stack: String = "example", config: [String] = [], appendToSpec: String = "", healthy: Bool = true, environment: [String: String] = [:]) async throws {
        h = try Harness(environment: environment)
        let cluster = FakeCluster()
        self.cluster = cluster
        if healthy {
            cluster.onApply = { json in
                guard case .object(var o) = json else { return }
                let kind = o["kind"]?.string
                if kind == "Deployment" {
                    let replicas = o["spec"]?["replicas"]?.int ?? 1
                    if case .object(var meta)? = o["metadata"] { meta["generation"] = .number(1); o["metadata"] = .object(meta) }
                    o["status"] = .object(["observedGeneration": .number(1), "replicas": .number(Double(replicas)),
                                           "updatedReplicas": .number(Double(replicas)), "availableReplicas": .number(Double(replicas))])
                } else if kind == "Job" {
                    o["status"] = .object(["succeeded": .number(1)])
                }
                json = .object(o)
            }
        }
        var ctx = h.ctx
        ctx.connect = { _ in cluster }
        self.ctx = ctx
        try h.tmp.write("kubeconfig", Self.kubeconfigText)
        try await h.initAndCreate(stack, config: config, appendToSpec: appendToSpec)
    }

    /// The same deployment and fake cluster under another context (e.g. a different `connect`).
    init(copying other: ClusterHarness, ctx: SoContext) {
        h = other.h
        cluster = other.cluster
        self.ctx = ctx
    }

    func start(wait: Bool = true, timeout: Double = 30) async throws -> StartReport {
        try await StartAction(ctx).run(StartRequest(directory: "dep", cluster: options, wait: wait, timeout: timeout, progress: .plain))
    }

    var id: String { (try? DeploymentFile.load(h.path("dep/deployment.yml"), fs: h.fs, diagnostics: DiagnosticSink()).deploymentID) ?? "" }
}

@Suite struct StartTests {
    @Test func appliesInOrderAndWaits() async throws {
        let c = try await ClusterHarness(appendToSpec: "")
        // While the workloads go out, the deployment's Lease is held by this run.
        final class Seen: @unchecked Sendable { var holder: String? }
        let seen = Seen()
        let cluster = c.cluster, id = c.id
        cluster.beforeCall = { call in
            if call.hasPrefix("apply Deployment") { seen.holder = cluster.object("Lease", "so-deployment-lock", namespace: id)?.at("spec", "holderIdentity")?.string }
        }
        let report = try await c.start()
        #expect(seen.holder?.hasPrefix("localhost:") == true, "\(String(describing: seen.holder))")
        let writes = c.cluster.calls.filter { !$0.hasPrefix("get ") && !$0.hasPrefix("list ") }.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        // The namespace is created, then locked with a Lease (the one lock of every start: one request more
        // than the locked create of earlier versions); then its labels with what pods use (in parallel),
        // then the workloads; then the Lease goes.
        #expect(Array(writes.prefix(2)) == ["create Namespace", "create Lease"])
        #expect(writes.dropFirst(2).prefix(5).sorted() == ["apply ConfigMap", "apply ConfigMap", "apply Namespace", "apply PersistentVolumeClaim", "apply Service"])
        #expect(writes.dropFirst(7).prefix(2).sorted() == ["apply Deployment", "apply Job"])
        #expect(writes.last == "delete Lease" && writes.count == 10, "\(writes)")
        // A namespace this start created holds no Job to look for.
        #expect(!c.cluster.calls.contains { $0.hasPrefix("get Job") })
        #expect(c.cluster.calls.filter { $0.hasPrefix("get ") } == ["get Namespace \(c.id)"])
        // The lock is released at the end.
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
        #expect(report.namespace == c.id)
        #expect(c.h.console.stdout.contains("started \(c.id) in namespace \(c.id)"))
        let ns = try #require(c.cluster.object("Namespace", c.id))
        #expect(ns.annotations["laconic.com/deployment-dir"] == c.h.path("dep"))
    }

    @Test func generatedSecretsAreMadeOnceAndNeverPrinted() async throws {
        let c = try await ClusterHarness(appendToSpec: "")
        try c.h.tmp.write("dep/spec.yml", try c.h.read("dep/spec.yml").replacingOccurrences(of: "config:\n", with: "config:\n  API_TOKEN: $generate:hex:16$\n  PIN: pin-$generate:alnum:6$\n"))
        _ = try await c.start()
        let secret = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        let token = try #require(secret["data"]?["API_TOKEN"]?.string.flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) })
        let pin = try #require(secret["data"]?["PIN"]?.string.flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) })
        #expect(token.count == 32 && token.allSatisfy(\.isHexDigit))
        #expect(pin.hasPrefix("pin-") && pin.count == 10)
        _ = try await c.start()
        let again = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        #expect(again["data"] == secret["data"])
        for text in [c.h.console.stdout, c.h.console.stderr, try c.h.read("dep/config.env"), try c.h.read("dep/spec.yml")] {
            #expect(!text.contains(token) && !text.contains(pin))
        }
        let rotated = try await ObserveAction(c.ctx).rotateSecrets("dep", cluster: c.options, keys: ["PIN"], timeout: 30)
        #expect(rotated == ["PIN"])
        let after = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        #expect(after["data"]?["API_TOKEN"] == secret["data"]?["API_TOKEN"])
        #expect(after["data"]?["PIN"] != secret["data"]?["PIN"])
        #expect(c.cluster.calls.contains("patch Deployment \(c.id)/\(c.id)-deployment"))
    }

    @Test func secretEnvCopiesHostVariablesIntoTheSecret() async throws {
        let c = try await ClusterHarness(appendToSpec: "secret-env: [ANTHROPIC_API_KEY]\n", environment: ["ANTHROPIC_API_KEY": "sk-test-fake-value"])
        _ = try await c.start()
        let secret = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        #expect(secret["data"]?["ANTHROPIC_API_KEY"]?.string == Data("sk-test-fake-value".utf8).base64EncodedString())
        #expect(!c.h.console.stdout.contains("sk-test-fake-value"))
        for f in try c.h.fs.walk(c.h.path("dep")) { #expect(try !c.h.read("dep/" + f.relative).contains("sk-test-fake-value")) }
    }

    @Test func jobsRunOnceAndRemovedObjectsArePruned() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let job = "\(c.id)-job-example-migrate"
        #expect(c.cluster.object("Job", job, namespace: c.id) != nil)
        // Remove the job from the stack copy in D, add a stale object the deployment owns.
        try c.h.tmp.write("dep/stack.yml", try c.h.read("dep/stack.yml").replacingOccurrences(of: "jobs:\n  - example-migrate\n", with: ""))
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "ConfigMap", name: "stale", namespace: c.id,
                                      labels: [("app", c.id), ("app.kubernetes.io/instance", c.id), ("app.kubernetes.io/managed-by", "so")]))
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "ConfigMap", name: "not-ours", namespace: c.id, labels: [("app", "other")]))
        let report = try await c.start()
        #expect(Set(report.pruned) == ["ConfigMap stale", "Job \(job)"])
        #expect(c.cluster.object("ConfigMap", "not-ours", namespace: c.id) != nil)
    }

    @Test func updateEnvsAppliesOnlyDeployments() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "NEW_SETTING=on\n")
        let before = c.cluster.calls.count
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: c.options, progress: .plain, onlyKinds: ["Deployment"]))
        let writes = c.cluster.calls.dropFirst(before).filter { $0.hasPrefix("apply ") || $0.hasPrefix("create ") }.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        // The namespace exists (its create is refused): a Lease locks it.
        #expect(writes == ["create Namespace", "create Lease", "apply Deployment"])
        #expect(!c.cluster.calls.dropFirst(before).contains { $0.hasPrefix("delete ConfigMap") || $0.hasPrefix("list ConfigMap") })
        let env = c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id)?.at("spec", "template", "spec", "containers")?.array.first?["env"]?.array ?? []
        #expect(env.contains { $0["name"]?.string == "NEW_SETTING" && $0["value"]?.string == "on" })
    }

    @Test func pruneListsOnlyTheKindsTheLastStartApplied() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        // A new namespace: nothing to prune, nothing listed.
        #expect(!c.cluster.calls.contains { $0.hasPrefix("list ") && !$0.hasPrefix("list Deployment") && !$0.hasPrefix("list Job") && !$0.hasPrefix("list Pod") && !$0.hasPrefix("list PersistentVolumeClaim") })
        let ns = try #require(c.cluster.object("Namespace", c.id))
        #expect(ns.annotations["so.dev/kinds"] == "ConfigMap,Deployment,Job,Secret,Service")
        let before = c.cluster.calls.count
        _ = try await c.start()
        let listed = Set(c.cluster.calls[before...].filter { $0.hasPrefix("list ") && $0.contains("managed-by=so") }.map { String($0.split(separator: " ")[1]) })
        #expect(listed == ["ConfigMap", "Deployment", "Job", "Secret", "Service", "PersistentVolumeClaim", "PersistentVolume"], "\(listed)")
    }

    @Test func anExistingNamespaceIsReannotatedAfterTheLock() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let before = c.cluster.calls.count
        _ = try await c.start()
        let calls = Array(c.cluster.calls[before...])
        let lock = try #require(calls.firstIndex { $0.hasPrefix("create Lease") })
        let namespace = try #require(calls.firstIndex { $0.hasPrefix("apply Namespace") })
        #expect(calls.prefix(2).sorted() == ["create Namespace \(c.id)", "get Namespace \(c.id)"])
        #expect(lock < namespace, "\(calls)")
        #expect(calls.filter { $0.hasPrefix("apply Namespace") }.count == 1)
        #expect(calls.last == "delete Lease \(c.id)/so-deployment-lock")
    }

    @Test func aStartThatChangesNothingSendsOnlyTheNamespaceAndRepairsDrift() async throws {
        let c = try await ClusterHarness()
        let first = try await c.start()
        var before = c.cluster.calls.count
        var report = try await c.start()
        var writes = c.cluster.calls[before...].filter { $0.hasPrefix("apply ") }
        #expect(Array(writes) == ["apply Namespace \(c.id)"])
        // Everything the first start applied is unchanged, but the Job (not re-run) and the Namespace.
        let expected = first.applied.filter { !$0.hasPrefix("Job ") && !$0.hasPrefix("Namespace ") }
        #expect(expected.count == 5 && report.unchanged.sorted() == expected.sorted(), "\(report.unchanged)")
        #expect(report.applied == ["Namespace \(c.id)"])
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("get Job") })
        #expect(c.h.console.stdout.contains("unchanged 5 objects already as rendered"))

        // Someone edits a ConfigMap by hand: the next start puts it back, and sends nothing else.
        let cm = try #require(c.cluster.all.first { $0.0.type.kind == "ConfigMap" }?.0.name)
        c.cluster.update("ConfigMap", cm, namespace: c.id) { json in
            guard case .object(var o) = json else { return }
            o["data"] = .object(["index.html": .string("defaced")])
            json = .object(o)
        }
        before = c.cluster.calls.count
        _ = try await c.start()
        writes = c.cluster.calls[before...].filter { $0.hasPrefix("apply ") }
        #expect(Array(writes) == ["apply Namespace \(c.id)", "apply ConfigMap \(c.id)/\(cm)"])
        #expect(c.cluster.object("ConfigMap", cm, namespace: c.id)?["data"]?["index.html"]?.string != "defaced")

        // A config change reaches the Deployment only.
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "NEW_SETTING=on\n")
        before = c.cluster.calls.count
        report = try await c.start()
        writes = c.cluster.calls[before...].filter { $0.hasPrefix("apply ") }
        #expect(Array(writes) == ["apply Namespace \(c.id)", "apply Deployment \(c.id)/\(c.id)-deployment"])
        #expect(report.skipped == ["Job \(c.id)/\(c.id)-job-example-migrate"])
    }

    @Test func jobsAreNotReapplied() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let report = try await c.start()
        #expect(report.skipped == ["Job \(c.id)/\(c.id)-job-example-migrate"])
        #expect(c.cluster.calls.filter { $0.hasPrefix("apply Job") }.count == 1)
    }

    /// The API server goes away mid-start: exit 69, and the next start converges to the same objects and
    /// keeps the secret values the interrupted run already stored.
    @Test func aStartInterruptedMidwayConverges() async throws {
        let c = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        c.cluster.failures["apply Deployment"] = SoError("cannot reach the API server https://127.0.0.1:6443 (context kind-test): connection refused",
                                                          hint: "is the cluster running?", exitCode: SoError.exitUnreachable)
        await #expect { _ = try await c.start() } throws: { ($0 as? SoError)?.exitCode == SoError.exitUnreachable }
        let secret = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id)?.at("data", "SESSION")?.string)
        #expect(c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id) == nil)
        c.cluster.failures = [:]
        _ = try await c.start()
        #expect(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id)?.at("data", "SESSION")?.string == secret)
        // Same objects as a start that never failed.
        let clean = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        _ = try await clean.start()
        func shape(_ h: ClusterHarness) -> [String] {
            h.cluster.all.map { "\($0.0.type.kind) \($0.0.name.replacingOccurrences(of: h.id, with: "ID"))" }.sorted()
        }
        #expect(shape(c) == shape(clean))
    }

    @Test func refusesANamespaceOwnedByAnotherDirectory() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", "/elsewhere/dep")]))
        await #expect { _ = try await c.start() } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.contains("namespace \(c.id) belongs to another deployment directory: /elsewhere/dep")
        }
        // Its create was refused (it exists); nothing was written.
        #expect(!c.cluster.calls.contains { $0.hasPrefix("apply") || $0.hasPrefix("create Lease") || $0.hasPrefix("patch") })
        #expect(c.cluster.object("Namespace", c.id)?.annotations["laconic.com/deployment-dir"] == "/elsewhere/dep")
    }

    @Test func imagePullFailuresNameTheImage() async throws {
        let c = try await ClusterHarness(healthy: false)
        c.cluster.onApply = { json in
            // Pods never become available; the scheduler placed one and the kubelet cannot pull.
            _ = json
        }
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        var pod = try JSON.parse(Data(KubeObject(apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id,
                                                 labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]).json().utf8))
        _ = pod
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id, labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]))
        c.cluster.update("Pod", "web-1", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object(["containerStatuses": .array([.object(["name": .string("web"), "image": .string("nginx:1.27-alpine"),
                                                                        "state": .object(["waiting": .object(["reason": .string("ImagePullBackOff")])])])])])
            p = .object(o)
        }
        pod = .null
        await #expect { _ = try await c.start() } throws: { e in
            (e as? SoError)?.message == "pod \(c.id)/web-1 container web cannot pull image nginx:1.27-alpine (ImagePullBackOff)"
        }
    }

    @Test func timeoutNamesTheObjectAndTheSchedulersReason() async throws {
        let c = try await ClusterHarness(healthy: false)
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id, labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]))
        c.cluster.update("Pod", "web-1", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object(["conditions": .array([.object(["type": .string("PodScheduled"), "status": .string("False"), "reason": .string("Unschedulable"),
                                                                  "message": .string("0/1 nodes are available: 1 Insufficient cpu.")])])])
            p = .object(o)
        }
        await #expect { _ = try await c.start(timeout: 10) } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.hasPrefix("timed out after 10s waiting for Deployment \(c.id)-deployment") && m.contains("cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.")
        }
    }

    /// A pod the ReplicaSet may not create (here a quota) shows on no pod, only on the Deployment: it is
    /// named at once instead of a timeout that blames the claim waiting for that pod.
    @Test func aQuotaThatRefusesThePodIsNamedAtOnce() async throws {
        let c = try await ClusterHarness(healthy: false)
        c.cluster.onApply = { json in
            guard case .object(var o) = json, o["kind"]?.string == "Deployment" else { return }
            o["status"] = .object(["conditions": .array([.object([
                "type": .string("ReplicaFailure"), "status": .string("True"), "reason": .string("FailedCreate"),
                "message": .string("pods \"web-1\" is forbidden: exceeded quota: q, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=200m"),
            ])])])
            json = .object(o)
        }
        do {
            _ = try await c.start(timeout: 600)
            Issue.record("a refused pod was waited for")
        } catch let e as SoError {
            #expect(e.message.contains("cannot create its pods: pods \"web-1\" is forbidden: exceeded quota: q") && e.hint?.contains("raise quota:") == true, "\(e.message)")
            #expect(e.exitCode != SoError.exitTimeout)
        }
    }

    @Test func crashLoopsShowTheLastLogLines() async throws {
        let c = try await ClusterHarness(healthy: false)
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id, labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]))
        c.cluster.update("Pod", "web-1", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object(["containerStatuses": .array([.object(["name": .string("web"), "state": .object(["waiting": .object(["reason": .string("CrashLoopBackOff")])])])])])
            p = .object(o)
        }
        c.cluster.podLogs["\(c.id)/web-1/web"] = "starting\nnginx: [emerg] unknown directive \"lisen\"\n"
        await #expect { _ = try await c.start() } throws: { e in
            ((e as? SoError)?.message ?? "").hasSuffix("keeps crashing (CrashLoopBackOff); last log lines: starting | nginx: [emerg] unknown directive \"lisen\"")
        }
    }
}

@Suite struct IngressControllerTests {
    static func withProxy() async throws -> ClusterHarness {
        let c = try await ClusterHarness()
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write("dep/spec.yml", spec.replacingOccurrences(of: "network:\n", with: """
        network:
          http-proxy:
            - host-name: example.localhost
              routes:
                - path: /
                  proxy-to: web:80

        """))
        return c
    }

    func start(_ c: ClusterHarness, image: String? = nil) async throws {
        var options = c.options
        options.performClusterManagement = true
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: options, timeout: 30, progress: .plain))
    }

    @Test func installsOnceWhenAnIngressNeedsIt() async throws {
        let c = try await Self.withProxy()
        try await start(c)
        let controller = try #require(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string == "ghcr.io/laconicnetwork/caddy-ingress:latest")
        let cls = try #require(c.cluster.object("IngressClass", "caddy"))
        #expect(cls.annotations["ingressclass.kubernetes.io/is-default-class"] == "true")
        #expect(c.cluster.object("ClusterRoleBinding", "so:caddy-ingress-controller") != nil)
        // The controller is installed before the deployment's own objects.
        let applies = c.cluster.calls.filter { $0.hasPrefix("apply ") }
        #expect(applies.firstIndex { $0.contains("caddy-ingress-controller") }! < applies.firstIndex { $0.contains("Ingress \(c.id)") || $0.hasPrefix("apply Ingress") }!)
        let before = c.cluster.calls.count
        try await start(c)
        // A ready controller is left alone.
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply") && $0.contains("caddy") })
        #expect(c.h.console.stdout.contains("controller caddy-system/caddy-ingress-controller is ready"))
    }

    @Test func notInstalledWithoutIngressOrClusterManagement() async throws {
        let plain = try await ClusterHarness()
        try await start(plain)
        #expect(plain.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        let c = try await Self.withProxy()
        _ = try await c.start()   // --skip-cluster-management
        #expect(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        #expect(c.cluster.object("Ingress", "\(c.id)-ingress", namespace: c.id) != nil)
    }

    @Test func specImageRollsTheController() async throws {
        let c = try await Self.withProxy()
        try await start(c)
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write("dep/spec.yml", spec + "caddy-ingress-image: example.org/caddy-ingress:2\n")
        try await start(c)
        let controller = try #require(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string == "example.org/caddy-ingress:2")
    }
}

@Suite struct LiveProgressTests {
    /// On a terminal the wait redraws one status line (spinner, elapsed); in CI it prints a line per change.
    @Test(arguments: [true, false]) func waitProgress(terminal: Bool) async throws {
        let c = try await ClusterHarness(healthy: false)
        var ctx = c.ctx
        let console = CapturedConsole(isTerminal: terminal)
        ctx.console = console
        await #expect(throws: SoError.self) {
            _ = try await StartAction(ctx).run(StartRequest(directory: "dep", cluster: c.options, timeout: 10, progress: .auto))
        }
        let waits = console.statuses.filter { $0.contains("waiting for Deployment") }
        if terminal {
            #expect(waits.count >= 4, "\(console.statuses)")
            #expect(waits.last?.hasSuffix("(9s)") == true, "\(waits)")
            #expect(console.statuses.contains { $0.contains("applied 2/2: 1 Deployment, 1 Job") }, "\(console.statuses)")
            #expect(!console.stdout.contains("waiting Deployment"))
        } else {
            #expect(console.statuses.isEmpty)
            // One line for the state, not one per poll.
            #expect(console.stdout.components(separatedBy: "waiting Deployment").count - 1 == 1, "\(console.stdout)")
        }
    }
}

@Suite struct StopAndObserveTests {
    @Test func stopKeepsVolumesAndSecretsUnlessAsked() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write("dep/spec.yml", try c.h.read("dep/spec.yml").replacingOccurrences(of: "config:\n", with: "config:\n  K: $generate:hex:8$\n"))
        _ = try await c.start()
        try await StopAction(c.ctx).run(StopRequest(directory: "dep", cluster: c.options))
        let left = c.cluster.all.map { "\($0.0.type.kind) \($0.0.name)" }.sorted()
        #expect(left == ["Namespace \(c.id)", "PersistentVolumeClaim \(c.id)-web-data", "Secret \(c.id)-generated-secrets"])
        _ = try await c.start()
        try await StopAction(c.ctx).run(StopRequest(directory: "dep", cluster: c.options, deleteVolumes: true, deleteNamespace: true))
        #expect(c.cluster.all.isEmpty)
    }

    @Test func statusPsLogsExecRestart() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Pod", name: "web-abc", namespace: c.id,
                                      labels: [("app", c.id), ("app.kubernetes.io/instance", c.id), ("app.kubernetes.io/component", "example")],
                                      body: [("spec", .map([("containers", .list([.map([("name", .string("web")), ("image", .string("nginx")),
                                                                                       ("ports", .list([.map([("containerPort", .int(80))])]))])]))]))]))
        c.cluster.update("Pod", "web-abc", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object(["phase": .string("Running"), "podIP": .string("10.0.0.7"),
                                   "containerStatuses": .array([.object(["name": .string("web"), "ready": .bool(true), "restartCount": .number(2)])])])
            p = .object(o)
        }
        let status = try await ObserveAction(c.ctx).status("dep", cluster: c.options)
        #expect(status.ready)
        #expect(status.workloads.map(\.name).sorted() == ["\(c.id)-deployment", "\(c.id)-job-example-migrate"])
        let ps = try await ObserveAction(c.ctx).ps("dep", cluster: c.options)
        #expect(ps.count == 1 && ps[0].phase == "Running" && ps[0].ready == "1/1" && ps[0].restarts == 2 && ps[0].ports == ["web:80"])

        c.cluster.podLogs["\(c.id)/web-abc/web"] = "one\ntwo\nthree\n"
        try await ObserveAction(c.ctx).logs(.init(directory: "dep", cluster: c.options, tail: 2))
        #expect(c.h.console.stdout.hasSuffix("web | two\nweb | three"))

        c.h.processes.expect(["kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "exec", "web-abc", "-c", "web", "--", "nginx", "-t"], exitCode: 3)
        let code = try await ObserveAction(c.ctx).exec("dep", cluster: c.options, service: "web", command: ["nginx", "-t"], interactive: false, tty: false)
        #expect(code == 3)
        #expect(c.h.processes.unexpected.isEmpty)
        await #expect(throws: SoError.self) { _ = try await ObserveAction(c.ctx).exec("dep", cluster: c.options, service: "nope", command: [], interactive: false, tty: false) }

        // shell: the first service by default, interactive, in /workspace when it exists.
        c.h.processes.expect(["kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "exec", "-i", "web-abc", "-c", "web", "--", "sh", "-c",
                              "cd /workspace 2>/dev/null || true; if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"])
        #expect(try await ObserveAction(c.ctx).shell("dep", cluster: c.options, service: nil) == 0)
        #expect(c.h.processes.unexpected.isEmpty)

        c.h.processes.expect(["kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "port-forward", "service/web", "8080:80"])
        #expect(try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "web", ports: ["8080:80"]) == 0)
        await #expect(throws: SoError.self) { _ = try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "web", ports: ["x:80"]) }

        try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: true, timeout: 30)
        let d = try #require(c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id))
        #expect(d.at("spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")?.string != nil)
    }
}

@Suite struct KindTargetTests {
    @Test func createsTheClusterWhenNoneExistsAndReusesItLater() async throws {
        let c = try await ClusterHarness()
        let clusterID = try DeploymentFile.load(c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()).clusterID
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")
        p.expect(["kind", "create", "cluster", "--name", clusterID, "--config", c.h.path("dep/kind-config.yml")])
        p.expect(["kind", "get", "kubeconfig", "--name", clusterID], stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        // The example's images are public (no :local tag): no docker calls, nothing to load.
        do { _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: ClusterOptions(), progress: .plain)) } catch { Issue.record("\(error) \(p.calls.map(\.arguments))"); return }
        #expect(p.unexpected.isEmpty, "\(p.unexpected) \(p.calls.map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster \(clusterID)"))

        // A second deployment on the same host reuses the running cluster, whatever its name.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["kind", "get", "kubeconfig", "--name", "shared"], stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(c.h.console.stdout.contains("using the host's kind cluster 'shared'"))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty)
    }
}

extension KindTargetTests {
    /// kind writes `kind-<cluster>` into the user's kubeconfig: it is used without asking kind (which
    /// would ask docker twice); a stale entry that does not answer falls back to `kind get kubeconfig`.
    @Test func theUsersKindContextIsUsedAndAStaleOneFallsBackToKind() async throws {
        var c = try await ClusterHarness()
        let p = c.h.processes
        p.missing = []
        try c.h.tmp.write("user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "get", "kubeconfig"]) })

        // The user's entry points at a port nothing listens on any more: kind's own kubeconfig is used.
        try c.h.tmp.write("user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared")
            .replacingOccurrences(of: "127.0.0.1:6443", with: "127.0.0.1:1"))
        let cluster = c.cluster
        var ctx = c.ctx
        ctx.connect = { connection in
            if connection.server.hasSuffix(":1") {
                let gone = FakeCluster()
                for verb in ["get", "create", "apply", "list", "patch", "update", "delete"] {
                    gone.failures[verb] = SoError("cannot reach the API server \(connection.server) (context \(connection.contextName)): connection refused",
                                                  hint: "is the cluster running?", exitCode: SoError.exitUnreachable)
                }
                return gone
            }
            return cluster
        }
        c = ClusterHarness(copying: c, ctx: ctx)
        // Listed, the stale context fails, listed again through kind, which prints a kubeconfig that answers.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["kind", "get", "kubeconfig", "--name", "shared"], stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster shared"))

        // The deployment's own cluster in the user's kubeconfig: no kind process at all.
        let clusterID = try DeploymentFile.load(c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()).clusterID
        try c.h.tmp.write("user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        let calls = p.calls.count
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.calls.count == calls, "\(p.calls.dropFirst(calls).map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster \(clusterID)"))
    }

    /// Reaching the cluster overlaps rendering, but a deployment that does not render creates no cluster.
    @Test func aDeploymentThatDoesNotRenderCreatesNoCluster() async throws {
        let c = try await ClusterHarness()
        let spec = try c.h.read("dep/spec.yml")
        try c.h.tmp.write("dep/spec.yml", spec.replacingOccurrences(of: "network:\n", with: "network:\n  http-proxy:\n    - host-name: a.localhost\n      routes:\n        - path: /\n          proxy-to: nosuch:80\n"))
        #expect(try c.h.read("dep/spec.yml") != spec)
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")
        await #expect { _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: ClusterOptions(), progress: .plain)) } throws: { e in
            ((e as? SoError)?.message ?? "").contains("no service 'nosuch'")
        }
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "create"]) }, "\(p.calls.map(\.arguments))")
        #expect(p.unexpected.isEmpty)
        #expect(c.cluster.calls.isEmpty)
    }
}

@Suite struct ResyncTests {
    /// restart refreshes D from the changed stack, re-applies (pruning what left) and rolls the pods.
    @Test func restartResyncsFromTheStackSource() async throws {
        let c = try await ClusterHarness()
        // A private copy of the example stack as the deployment's source.
        let src = c.h.path("src")
        let fs = LocalFileSystem()
        for rel in ["stacks/example/stack.yml", "compose/docker-compose-example.yml", "compose-jobs/docker-compose-example-migrate.yml",
                    "config/example/default.conf", "config/example/index.html"] {
            try fs.write(try fs.readData(Path.join(RepoPaths.root, rel)), to: Path.join(src, rel))
        }
        try await InitAction(c.ctx).run(InitRequest(stack: Path.join(src, "stacks/example"), output: "spec2.yml"))
        try await CreateAction(c.ctx).run(CreateRequest(specFile: "spec2.yml", deploymentDir: "dep2"))
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep2", cluster: c.options, progress: .plain))
        let id = try DeploymentFile.load(c.h.path("dep2/deployment.yml"), fs: fs, diagnostics: DiagnosticSink()).deploymentID
        #expect(c.cluster.object("Job", "\(id)-job-example-migrate", namespace: id) != nil)

        // The stack drops its job and changes the page.
        try c.h.tmp.write("src/stacks/example/stack.yml", try c.h.read("src/stacks/example/stack.yml").replacingOccurrences(of: "jobs:\n  - example-migrate\n", with: ""))
        try c.h.tmp.write("src/config/example/index.html", "<p>new</p>\n")
        c.h.processes.expect(["git", "-C", Path.join(src, "stacks/example"), "rev-parse", "--show-toplevel"], exitCode: 128, stderr: "fatal: not a git repository")
        try await ResyncAction(c.ctx).run(directory: "dep2", cluster: c.options, pull: true, wait: true, timeout: 30)
        #expect(c.h.console.stdout.contains("is not in a git repository; using it as it is"))
        #expect(try c.h.read("dep2/config/example/index.html") == "<p>new</p>\n")
        #expect(c.h.fs.isFile(c.h.path("dep2/config/example/index.html.bak")))
        #expect(c.cluster.object("Job", "\(id)-job-example-migrate", namespace: id) == nil)
        let cm = try #require(c.cluster.object("ConfigMap", "\(id)-host-path-config-example-index-html", namespace: id))
        #expect(cm["data"]?["index.html"]?.string == "<p>new</p>\n")
        let d = try #require(c.cluster.object("Deployment", "\(id)-deployment", namespace: id))
        #expect(d.at("spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt") != nil)
        #expect(c.h.processes.unexpected.isEmpty)
    }
}

/// One cluster-selection rule for every verb: flags > the deployment's own > SO_KUBECONFIG > the host's
/// kind cluster > the current context of $KUBECONFIG; nothing answering is one error naming all of it.
@Suite struct ClusterSelectionTests {
    static func kubeconfig(context: String, server: String = "https://127.0.0.1:6443") -> String {
        ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: context).replacingOccurrences(of: "https://127.0.0.1:6443", with: server)
    }

    @Test func theUsersCurrentContextIsTheLastResort() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "prod"))
        // No kind installed (the harness's default): status and list reach $KUBECONFIG's current context.
        let status = try await ObserveAction(c.ctx).status("dep", cluster: ClusterOptions(performClusterManagement: false))
        #expect(status.cluster.contains("prod"), "\(status.cluster)")
        _ = try await ListAction(c.ctx).run(cluster: ClusterOptions(performClusterManagement: false))
    }

    @Test func soKubeconfigComesAfterTheDeploymentsOwnKindCluster() async throws {
        let c = try await ClusterHarness(environment: ["SO_KUBECONFIG": "/nonexistent/ci-kubeconfig"])
        let clusterID = try DeploymentFile.load(c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()).clusterID
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "kind-\(clusterID)"))
        let target = try await ClusterTargets(ctx: c.ctx).find(try RenderAction(c.ctx).model("dep"), ClusterOptions(performClusterManagement: false), allowCreate: false)
        #expect(target?.kindCluster == clusterID && target?.kubeconfigFile == nil)
        // Without the deployment's own cluster, SO_KUBECONFIG (here missing: its error names it).
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "other"))
        await #expect { _ = try await ClusterTargets(ctx: c.ctx).find(try RenderAction(c.ctx).model("dep"), ClusterOptions(performClusterManagement: false), allowCreate: false) }
            throws: { ($0 as? SoError)?.message.contains("/nonexistent/ci-kubeconfig") == true }
    }

    @Test func nothingToUseNamesEverythingTried() async throws {
        let c = try await ClusterHarness()
        await #expect { _ = try await ObserveAction(c.ctx).status("dep", cluster: ClusterOptions(performClusterManagement: false)) } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.exitCode == SoError.exitUnreachable && e.message.hasPrefix("no cluster to use; tried --kubeconfig/--context (not given)")
                && e.message.contains("SO_KUBECONFIG (not set)") && e.message.contains("kind is not installed") && e.message.contains("$KUBECONFIG")
                && (e.hint ?? "").contains("--kubeconfig")
        }
    }

    /// exec, shell and port-forward hand kubectl exactly the cluster so chose.
    @Test func kubectlGetsTheChosenKubeconfig() async throws {
        let c = try await ClusterHarness(environment: ["SO_KUBECONFIG": "/tmp/ci-kubeconfig-for-test"])
        let target = ClusterTarget(connection: ClusterConnection(contextName: "ci", server: "https://127.0.0.1:6443"), kindCluster: nil, kubeconfigFile: "/tmp/ci-kubeconfig-for-test")
        #expect(target.kubectlFlags == ["--kubeconfig", "/tmp/ci-kubeconfig-for-test", "--context", "ci"])
        let user = ClusterTarget(connection: ClusterConnection(contextName: "kind-x", server: "https://127.0.0.1:6443"), kindCluster: "x")
        #expect(user.kubectlFlags == ["--context", "kind-x"])
        _ = c
    }
}
