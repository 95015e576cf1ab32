import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// End to end: the built `so` binary against a real API server named by SO_E2E_KUBECONFIG (with a node
/// that runs pods, or the stand-in node of ../shared/tools). Reported as skipped when it is not set.
enum E2E {
    static let kubeconfig = ProcessInfo.processInfo.environment["SO_E2E_KUBECONFIG"]
    static let binary =
        ProcessInfo.processInfo.environment["SO_E2E_BINARY"] ?? Path.join(RepoPaths.root, ".build/debug/so")

    static func so(_ args: [String], cwd: String, env: [String: String] = [:]) async throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["SO_ROOT"] = RepoPaths.root
        for (k, v) in env { environment[k] = v }
        return try await LocalProcessRunner().run(
            [binary] + args, workingDirectory: cwd, environment: environment, timeout: 300)
    }

    /// Whether the Job is complete as its own status says, asked right after start returned, without waiting
    /// (`--timeout=0s`): "started" means any reader that looks then sees what `so` said.
    static func jobCompletes(_ job: String, in namespace: String) async throws -> Bool {
        try await kubectl(["-n", namespace, "wait", "job/\(job)", "--for=condition=complete", "--timeout=0s"])
            .exitCode == 0
    }

    static func kubectl(_ args: [String]) async throws -> ProcessResult {
        try await LocalProcessRunner().run(
            ["kubectl", "--kubeconfig", kubeconfig!] + args, workingDirectory: nil, environment: nil, timeout: 60)
    }
}

@Suite(
    .serialized, .enabled(if: E2E.kubeconfig != nil, "SO_E2E_KUBECONFIG is not set: no real API server"),
    // It starts laconic's own test stack (its job, config and secret names).
    .enabled(if: RepoPaths.hasShared, "\(RepoPaths.sharedAbsent)")) struct E2ETests
{
    @Test func startStatusStopAgainstARealAPIServer() async throws {
        let t = try TempDir("so-e2e")
        defer { t.cleanup() }
        let kc = ["--kubeconfig", E2E.kubeconfig!]
        var r = try await E2E.so(
            [
                "--stack", Path.join(RepoPaths.laconicStacks, "stacks/test"), "deploy", "init", "--output", "spec.yml",
                "--config", "CERC_TEST_PARAM_1=PASSED", "--config", "SESSION=$generate:hex:16$",
            ], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        try t.write(
            "spec.yml",
            try t.read("spec.yml").replacingOccurrences(
                of: "secrets: {}", with: "secrets:\n  test-secret: [TEST_SECRET_KEY]\nsecret-env: [SO_E2E_API_KEY]"))
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let id = try t.read("dep/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }!
            .split(separator: " ")[1].description

        // The API server's own admission (Pod Security baseline) and validation accept everything.
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--timeout", "120", "--progress", "plain"] + kc, cwd: t.path,
            env: ["SO_E2E_API_KEY": "fake-key-for-e2e"])
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(!r.stdout.contains("fake-key-for-e2e") && !r.stderr.contains("fake-key-for-e2e"))
        let secret1 = try await E2E.kubectl([
            "-n", id, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.data.SESSION}",
        ]).stdout
        #expect(Data(base64Encoded: secret1).map { String(decoding: $0, as: UTF8.self) }?.count == 32)
        // The run that created the namespace held it by annotations, and gave them up at the end.
        #expect(
            try await E2E.kubectl(["get", "namespace", id, "-o", "jsonpath={.metadata.annotations}"]).stdout.contains(
                "lock") == false)
        #expect(try await E2E.jobCompletes("\(id)-job-test-job", in: id))
        let env = try await E2E.kubectl([
            "-n", id, "get", "deployment", "\(id)-deployment", "-o",
            "jsonpath={.spec.template.spec.containers[0].env[?(@.name==\"CERC_TEST_PARAM_1\")].value}",
        ]).stdout
        #expect(env == "PASSED")

        // Idempotent: a second start changes no secret, re-runs no Job, and sends no object again but the
        // Namespace (its start annotations): the API server stores what so sent, field for field.
        let version = {
            try await E2E.kubectl([
                "-n", id, "get", "deployment", "\(id)-deployment", "-o", "jsonpath={.metadata.resourceVersion}",
            ]).stdout
        }
        let before = try await version()
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--timeout", "120", "--progress", "plain"] + kc, cwd: t.path,
            env: ["SO_TRACE_API": "1", "SO_E2E_API_KEY": "fake-key-for-e2e"])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(
            try await E2E.kubectl([
                "-n", id, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.data.SESSION}",
            ]).stdout == secret1)
        let writes = r.stderr.split(separator: "\n").filter {
            $0.hasPrefix("api: ") && !$0.hasPrefix("api: GET") && !$0.hasPrefix("api: WATCH")
        }.map {
            $0.split(separator: " ").prefix(3).joined(separator: " ")
        }
        // (The namespace's create is refused, the Lease taken and given up; nothing changes: the one other write
        // is the merge patch renewing the Namespace's lifecycle annotations, none within the same second.)
        let lease = "/apis/coordination.k8s.io/v1/namespaces/\(id)/leases"
        #expect(
            writes.contains("api: POST \(lease)") && writes.contains("api: DELETE \(lease)/so-deployment-lock")
                && Set(writes).isSubset(of: [
                    "api: POST /api/v1/namespaces", "api: PATCH /api/v1/namespaces/\(id)", "api: POST \(lease)",
                    "api: DELETE \(lease)/so-deployment-lock",
                ]),
            "\(writes)")
        #expect(r.stdout.contains("objects already as rendered"), "\(r.stdout)")
        #expect(try await version() == before)
        // The dry run judges with start's own test: right after a start, every object is unchanged.
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--dry-run"] + kc, cwd: t.path,
            env: ["SO_E2E_API_KEY": "fake-key-for-e2e"])
        let planned = r.stdout.split(separator: "\n").filter { !$0.hasPrefix("dry run:") }
        #expect(
            r.exitCode == 0 && !planned.isEmpty && planned.allSatisfy { $0.hasPrefix("unchanged ") },
            "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--dry-run", "--detailed-exitcode"] + kc, cwd: t.path,
            env: ["SO_E2E_API_KEY": "fake-key-for-e2e"])
        #expect(r.exitCode == 0, "no drift: \(r.stdout)\n\(r.stderr)")

        // A ConfigMap edited by hand is put back by the next start.
        let cm = "\(id)-host-path-config-test-settings-env"
        let original = try await E2E.kubectl(["-n", id, "get", "configmap", cm, "-o", "jsonpath={.data}"]).stdout
        #expect(
            try await E2E.kubectl([
                "-n", id, "patch", "configmap", cm, "--type", "merge", "-p",
                "{\"data\":{\"settings.env\":\"defaced\"}}",
            ]).exitCode == 0)
        // --diff names the field the edit changed.
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--dry-run", "--diff"] + kc, cwd: t.path,
            env: ["SO_E2E_API_KEY": "fake-key-for-e2e"])
        #expect(
            r.stdout.contains("would configure ConfigMap \(id)/\(cm)")
                && r.stdout.contains("- data.settings.env: \"defaced\""), "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--dry-run", "--detailed-exitcode"] + kc, cwd: t.path,
            env: ["SO_E2E_API_KEY": "fake-key-for-e2e"])
        #expect(
            r.exitCode == 2 && r.stdout.contains("would configure ConfigMap \(id)/\(cm)"),
            "drift: \(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--no-wait"] + kc, cwd: t.path,
            env: ["SO_E2E_API_KEY": "fake-key-for-e2e"])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(try await E2E.kubectl(["-n", id, "get", "configmap", cm, "-o", "jsonpath={.data}"]).stdout == original)
        // The pods that read it roll onto its next revision.
        let revisions = try await E2E.kubectl([
            "-n", id, "get", "deployment", "\(id)-deployment", "-o",
            "jsonpath={.spec.template.metadata.annotations.so\\.dev/config-revisions}",
        ]).stdout
        #expect(revisions.contains("configmap/\(cm)=2"), "\(revisions)")

        // Server-side apply with field manager so.
        let managers = try await E2E.kubectl([
            "-n", id, "get", "deployment", "\(id)-deployment", "-o", "jsonpath={.metadata.managedFields[*].manager}",
        ]).stdout
        #expect(managers.split(separator: " ").contains("so"), "\(managers)")

        // rotate-secrets makes a new value and restarts.
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "rotate-secrets", "SESSION", "--timeout", "120"] + kc, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(
            try await E2E.kubectl([
                "-n", id, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.data.SESSION}",
            ]).stdout != secret1)

        // A job removed from the stack is pruned on the next start.
        try t.write(
            "dep/stack.yml", try t.read("dep/stack.yml").replacingOccurrences(of: "jobs:\n  - test-job\n", with: ""))
        r = try await E2E.so(["deployment", "--dir", "dep", "start", "--timeout", "120"] + kc, cwd: t.path)
        #expect(r.exitCode == 0 && r.stdout.contains("Job \(id)-job-test-job"), "\(r.stdout)\n\(r.stderr)")
        #expect(
            try await E2E.kubectl(["-n", id, "get", "job", "\(id)-job-test-job", "--ignore-not-found", "-o", "name"])
                .stdout.isEmpty)

        r = try await E2E.so(["deployment", "--dir", "dep", "status", "-o", "json"] + kc, cwd: t.path)
        let status = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(status?["ready"] as? Bool == true, "\(r.stdout)")
        r = try await E2E.so(["deployment", "--dir", "dep", "ps"] + kc, cwd: t.path)
        #expect(r.stdout.contains("\(id)-deployment-") && r.stdout.contains("Running"))

        // Another deployment directory may not take over the namespace.
        try t.write("spec2.yml", try t.read("spec.yml") + "namespace: \(id)\n")
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec2.yml", "--deployment-dir", "dep2"], cwd: t.path)
        #expect(r.exitCode == 0)
        r = try await E2E.so(["deployment", "--dir", "dep2", "start", "--no-wait"] + kc, cwd: t.path)
        #expect(
            r.exitCode != 0 && r.stderr.contains("belongs to another deployment directory: \(t.file("dep"))"),
            "\(r.stderr)")

        r = try await E2E.so(["deployment", "--dir", "dep", "stop"] + kc, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let left = try await E2E.kubectl([
            "-n", id, "get", "deployments,jobs,services,configmaps,pvc", "-l", "app=\(id)", "-o", "name",
        ]).stdout
        #expect(
            left.split(separator: "\n").map(String.init).sorted() == [
                "persistentvolumeclaim/\(id)-test-data-auto", "persistentvolumeclaim/\(id)-test-data-bind",
            ])
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace"] + kc, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let ns = try await E2E.kubectl(["get", "namespace", id, "--ignore-not-found", "-o", "name"]).stdout
        #expect(ns.isEmpty)
        let pvs = try await E2E.kubectl(["get", "pv", "-l", "app=\(id)", "-o", "name"]).stdout
        #expect(pvs.isEmpty)
    }

    /// Two starts of one new deployment at the same moment never interleave: each succeeds, or fails
    /// naming the other run; the secret values are made once.
    @Test func twoStartsAtOnceDoNotInterleave() async throws {
        let t = try TempDir("so-e2e-race")
        defer { t.cleanup() }
        let kc = ["--kubeconfig", E2E.kubeconfig!]
        var r = try await E2E.so(
            ["--stack", "example", "deploy", "init", "--output", "spec.yml", "--config", "TOKEN=$generate:hex:16$"],
            cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let id = try t.read("dep/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }!
            .split(separator: " ")[1].description
        for round in 1...3 {
            async let a = E2E.so(["deployment", "--dir", "dep", "start", "--no-wait"] + kc, cwd: t.path)
            async let b = E2E.so(["deployment", "--dir", "dep", "start", "--no-wait"] + kc, cwd: t.path)
            let results = try await [a, b]
            #expect(results.contains { $0.exitCode == 0 }, "round \(round): \(results.map(\.stderr))")
            for x in results where x.exitCode != 0 {
                #expect(
                    x.stderr.contains("being changed by another so run")
                        || x.stderr.contains("was deleted while this start began"), "round \(round): \(x.stderr)")
            }
            if round == 1 {
                let token = try await E2E.kubectl([
                    "-n", id, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.data.TOKEN}",
                ]).stdout
                #expect(token.count > 0)
            }
        }
        let token = try await E2E.kubectl([
            "-n", id, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.metadata.resourceVersion}",
        ]).stdout
        r = try await E2E.so(["deployment", "--dir", "dep", "start", "--no-wait"] + kc, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        // Made once: a later start sends the Secret no more.
        #expect(
            try await E2E.kubectl([
                "-n", id, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.metadata.resourceVersion}",
            ]).stdout == token)
        #expect(
            try await E2E.kubectl(["get", "namespace", id, "-o", "jsonpath={.metadata.annotations}"]).stdout.contains(
                "lock") == false)
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace"] + kc, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
    }

    /// Issue 5: 20 agent workspaces started 4 at a time, admitted under Pod Security `restricted` by the
    /// API server itself; `list` shows them; each has its own generated secrets; `cleanup --expired`
    /// removes exactly the expired ones; `down` leaves nothing labelled behind.
    // On a node that runs containers, each workspace clones a repository served by git daemon on the node's
    // address, from a copy of the stack whose agents request less CPU (20 × 250m do not fit 2 cores); there
    // `down` also reads each clean checkout. On the stand-in node nothing runs, so down needs --discard.
    @Test func twentyWorkspacesFourAtATime() async throws {
        let t = try TempDir("so-e2e-ws")
        defer { t.cleanup() }
        let env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"),
            "ANTHROPIC_API_KEY": "e2e-anthropic-key-not-real",
        ]
        var repo = "https://github.com/acme/web"
        var stack = "agent-workspace"
        var downFlags = ["--discard"]
        var daemon: Process?
        if RealNode.enabled {
            let served = try await AgentE2E.serveRepository(in: t)
            (daemon, repo, downFlags) = (served.0, served.url, [])
            stack = try AgentE2E.lightStack(in: t)
        }
        defer { daemon.map(AgentE2E.stop) }
        let names = (1...20).map { String(format: "e2e-ws-%02d", $0) }
        let expiring = Set(names.prefix(5))
        func inParallel(_ items: [String], _ body: @escaping @Sendable (String) async throws -> ProcessResult)
            async throws -> [String: ProcessResult]
        {
            var results: [String: ProcessResult] = [:]
            try await withThrowingTaskGroup(of: (String, ProcessResult).self) { group in
                var next = 0
                while next < min(4, items.count) {
                    let n = items[next]
                    group.addTask { (n, try await body(n)) }
                    next += 1
                }
                while let (n, r) = try await group.next() {
                    results[n] = r
                    if next < items.count {
                        let n2 = items[next]
                        group.addTask { (n2, try await body(n2)) }
                        next += 1
                    }
                }
            }
            return results
        }
        let ups = try await inParallel(names) { [stack, repo] n in
            try await E2E.so(
                [
                    "up", stack, "--name", n, "--config", "GIT_REPO=\(repo)", "--ttl",
                    expiring.contains(n) ? "1s" : "1h",
                    "--timeout", "180", "--progress", "plain",
                ], cwd: t.path, env: env)
        }
        for n in names { #expect(ups[n]?.exitCode == 0, "\(n): \(ups[n]?.stdout ?? "")\n\(ups[n]?.stderr ?? "")") }
        #expect(
            !ups.values.contains { $0.stdout.contains("e2e-anthropic-key") || $0.stderr.contains("e2e-anthropic-key") })

        // The API server admitted every pod under `restricted` (the ReplicaSets made them).
        let pods = try await E2E.kubectl([
            "get", "pods", "-A", "-l", "app.kubernetes.io/stack=agent-workspace", "-o",
            "jsonpath={range .items[*]}{.metadata.namespace}{\"\\n\"}{end}",
        ]).stdout
        // (Other suites run beside this one: their workspaces' namespaces are not this test's.)
        #expect(Set(pods.split(separator: "\n").map(String.init)).filter { $0.hasPrefix("e2e-ws-") } == Set(names))
        for n in names.prefix(3) {
            let level = try await E2E.kubectl([
                "get", "namespace", n, "-o", "jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}",
            ]).stdout
            #expect(level == "restricted")
        }

        var r = try await E2E.so(["deployment", "list", "-o", "json"], cwd: t.path, env: env)
        let rows = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
        let listed = Set(rows.compactMap { $0["name"] as? String }.filter { $0.hasPrefix("e2e-ws-") })
        #expect(listed == Set(names), "\(r.stdout)\n\(r.stderr)")
        #expect(
            rows.filter { ($0["name"] as? String)?.hasPrefix("e2e-ws-") == true }.allSatisfy {
                $0["ready"] as? Bool == true
            })

        var tokens: Set<String> = []
        for n in names {
            let id = try t.read("home/deployments/\(n)/deployment.yml").split(separator: "\n").first {
                $0.hasPrefix("deployment-id:")
            }!.split(separator: " ")[1]
            let token = try await E2E.kubectl([
                "-n", n, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.data.WORKSPACE_TOKEN}",
            ]).stdout
            #expect(!token.isEmpty)
            tokens.insert(token)
        }
        #expect(tokens.count == 20)

        try await Task.sleep(nanoseconds: 2_000_000_000)
        r = try await E2E.so(["cleanup", "--expired", "-o", "json"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let removed = ((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? [])
            .compactMap { $0["name"] as? String }
        #expect(Set(removed) == expiring, "\(r.stdout)")
        // Other suites run workspaces in the same cluster at the same time: only this test's names count.
        let remainingNamespaces = try await E2E.kubectl([
            "get", "namespaces", "-l", "app.kubernetes.io/stack=agent-workspace", "-o", "name",
        ]).stdout
        #expect(
            Set(
                remainingNamespaces.split(separator: "\n").map { String($0.dropFirst("namespace/".count)) }
                    .filter { $0.hasPrefix("e2e-ws-") }) == Set(names).subtracting(expiring))

        let downs = try await inParallel(names.filter { !expiring.contains($0) }) { [downFlags] n in
            try await E2E.so(["down", n] + downFlags, cwd: t.path, env: env)
        }
        for (n, d) in downs { #expect(d.exitCode == 0, "\(n): \(d.stderr)") }
        // down returns once the pods and volumes are gone, not the namespaces (Kubernetes takes about 5 s more).
        var left = ""
        for _ in 0..<60 {
            // Kind, namespace, name and (for a volume) its claim's namespace: an object is this test's when the
            // namespace it is, it lives in, or it was claimed from is one of this test's workspaces.
            let rows = try await E2E.kubectl([
                "get",
                "namespaces,pv,deployments,secrets,configmaps,services,pvc,networkpolicies,resourcequotas,limitranges",
                "-A", "-l", "app.kubernetes.io/stack=agent-workspace", "--no-headers",
                "-o",
                "custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name,CLAIM:.spec.claimRef.namespace",
            ]).stdout
            left = rows.split(separator: "\n").filter { row in
                row.split(separator: " ", omittingEmptySubsequences: true).contains { names.contains(String($0)) }
            }.joined(separator: "\n")
            if left.isEmpty { break }
            try await Task.sleep(nanoseconds: 1_000_000_000)
        }
        #expect(left.isEmpty, "\(left)")
        #expect(
            (try? LocalFileSystem().walk(t.file("home/deployments")).filter { $0.kind == .directory }.isEmpty) ?? true)
    }

    /// Issue 6: a plain compose file (our kitchen-sink fixture) as the stack, against the real API server:
    /// its secrets (file, environment) become Secrets, its networks NetworkPolicies, its one-shot service
    /// a Job, and the server accepts every object.
    // Its images (nginx, postgres, busybox:1.36 for dependency waits) come from a public registry the real
    // node's registry stand-in does not serve; RealNodeE2ETests runs a plain compose project there instead.
    @Test(.enabled(if: !RealNode.enabled, "its images come from a public registry the real node cannot reach"))
    func plainComposeFileAgainstARealAPIServer() async throws {
        let t = try TempDir("so-e2e-compose")
        defer { t.cleanup() }
        let fixture = Path.join(RepoPaths.root, "Tests/SoRenderTests/Stacks/compose/kitchen-sink/compose.yaml")
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "API_KEY": "e2e-api-key-not-real"]
        var r = try await E2E.so(["deploy", "init", "-f", fixture, "--output", "spec.yml"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let id = try t.read("dep/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }!
            .split(separator: " ")[1].description
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--timeout", "180", "--progress", "plain"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(
            !r.stdout.contains("e2e-api-key") && !r.stderr.contains("e2e-api-key")
                && !r.stdout.contains("not-a-real-password"))
        let key = try await E2E.kubectl([
            "-n", id, "get", "secret", "\(id)-secret-api-key", "-o", "jsonpath={.data.content}",
        ]).stdout
        #expect(Data(base64Encoded: key).map { String(decoding: $0, as: UTF8.self) } == "e2e-api-key-not-real")
        let pw = try await E2E.kubectl([
            "-n", id, "get", "secret", "\(id)-secret-db-password", "-o", "jsonpath={.data.content}",
        ]).stdout
        #expect(Data(base64Encoded: pw).map { String(decoding: $0, as: UTF8.self) } == "not-a-real-password\n")
        let policies = try await E2E.kubectl(["-n", id, "get", "networkpolicies", "-o", "name"]).stdout
        #expect(policies.split(separator: "\n").count == 4, "\(policies)")
        #expect(try await E2E.jobCompletes("\(id)-job-migrate", in: id))
        let deployments = try await E2E.kubectl(["-n", id, "get", "deployments", "-o", "name"]).stdout
        // web, api, db; debug's profile is not selected
        #expect(deployments.split(separator: "\n").count == 3, "\(deployments)")
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
    }
}

/// The ingress controller's install by `so` (a kind-target deployment with an Ingress), in a suite of its own: the two
/// tests share the cluster's one controller, so they run one after the other, but beside E2ETests rather than after
/// it (in E2ETests they were its last 250 s, the main tier's end, alone on the node: 2026-11-30).
@Suite(
    .serialized, .enabled(if: E2E.kubeconfig != nil, "SO_E2E_KUBECONFIG is not set: no real API server"))
struct IngressInstallE2ETests {
    /// A kind-target deployment with an Ingress installs the ingress controller once (SO_KUBECONFIG
    /// stands in for `kind get kubeconfig`), and the API server accepts every object of it.
    // On the real node the controller is IngressStandIn's image (no Caddy image exists offline): this proves
    // the install, the readiness wait and the second start finding it ready, not Caddy's routing.
    @Test func ingressControllerInstalledOnce() async throws {
        let t = try TempDir("so-e2e-ingress")
        defer { t.cleanup() }
        try await IngressStandIn.prepare(in: t)
        defer { IngressStandIn.remove() }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!]
        try await Self.create("dep", host: "e2e.localhost", in: t)
        let start = [
            "deployment", "--dir", "dep", "start", "--perform-cluster-management", "--timeout", "120", "--progress",
            "plain",
        ]
        var r = try await E2E.so(start, cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(
            r.stdout.contains("installing the Caddy ingress controller")
                || r.stdout.contains("controller caddy-system/caddy-ingress-controller is ready"), "\(r.stdout)")
        let ready = try await E2E.kubectl([
            "-n", "caddy-system", "get", "deployment", "caddy-ingress-controller", "-o",
            "jsonpath={.status.availableReplicas}",
        ]).stdout
        #expect(ready == "1")
        #expect(try await E2E.kubectl(["get", "ingressclass", "caddy", "-o", "name"]).stdout.contains("ingressclass"))
        r = try await E2E.so(start, cwd: t.path, env: env)
        #expect(
            r.exitCode == 0 && r.stdout.contains("controller caddy-system/caddy-ingress-controller is ready"),
            "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
    }

    /// Two kind-target deployments with an Ingress started at the same moment (two `so` processes) on a
    /// cluster with no controller: the cluster's lock lets one install it while the other waits, then finds it ready.
    @Test func twoProcessesInstallTheIngressControllerOnce() async throws {
        let t = try TempDir("so-e2e-ingress-race")
        defer { t.cleanup() }
        try await IngressStandIn.prepare(in: t)
        defer { IngressStandIn.remove() }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!]
        for dep in ["a", "b"] { try await Self.create(dep, host: "\(dep).e2e.localhost", in: t) }
        let start = ["start", "--perform-cluster-management", "--timeout", "180", "--progress", "plain"]
        async let a = E2E.so(["deployment", "--dir", "a"] + start, cwd: t.path, env: env)
        async let b = E2E.so(["deployment", "--dir", "b"] + start, cwd: t.path, env: env)
        let results = try await [a, b]
        for r in results { #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)") }
        let installs = results.filter { $0.stdout.contains("installing the Caddy ingress controller") }.count
        #expect(installs == 1, "\(results.map(\.stdout))")
        let replicas = try await E2E.kubectl([
            "-n", "caddy-system", "get", "deployments", "-o", "jsonpath={.items[*].status.availableReplicas}",
        ]).stdout
        #expect(replicas == "1", "one controller Deployment, one ready replica: \(replicas)")
        #expect(
            try await E2E.kubectl(["-n", "kube-system", "get", "lease", "so-cluster-lock", "-o", "name"]).stdout.isEmpty
        )
        for dep in ["a", "b"] {
            let r = try await E2E.so(
                ["deployment", "--dir", dep, "stop", "--delete-volumes", "--delete-namespace"], cwd: t.path, env: env)
            #expect(r.exitCode == 0, "\(r.stderr)")
        }
    }

    /// The example stack with an Ingress for `host` (a kind target), created in `t/dir` from `t/dir.yml`, its images
    /// the node's.
    static func create(_ dir: String, host: String, in t: TempDir) async throws {
        var r = try await E2E.so(["--stack", "example", "deploy", "init", "--output", "\(dir).yml"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let proxy =
            "network:\n  http-proxy:\n    - host-name: \(host)\n      routes:\n        - path: /\n          proxy-to: web:80\n"
        try t.write(
            "\(dir).yml",
            try t.read("\(dir).yml").replacingOccurrences(of: "network:\n", with: proxy) + IngressStandIn.specLine)
        r = try await E2E.so(["deploy", "create", "--spec-file", "\(dir).yml", "--deployment-dir", dir], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        try IngressStandIn.useLocalImages(in: t, deployment: dir)
    }
}

/// The ingress controller the two ingress tests install. On the real node it is a stand-in (no Caddy image
/// exists offline): busybox answering the controller's readiness probe (`/healthz` on 9765) and HTTP on 80,
/// whatever flags the controller's Deployment passes. It proves the install, the wait and the cluster lock,
/// not Caddy's routing. On the stand-in node (pods are marked Running, nothing runs) the default image is kept.
enum IngressStandIn {
    static let image = "localhost/so-e2e-ingress:e2e"
    static var specLine: String { RealNode.enabled ? "caddy-ingress-image: \(image)\n" : "" }

    /// A cluster with no ingress controller (whatever an earlier run left is removed), and on the real node the
    /// stand-in image built with the kit's buildah and loaded into the node.
    static func prepare(in t: TempDir) async throws {
        remove()
        guard RealNode.enabled else { return }
        try writeContext(in: t)
        try await AgentE2E.buildAndLoad(image, context: t.file("ingress"))
    }

    /// The stand-in's build context, `t/ingress` (a Containerfile both buildah and `docker build -f` read).
    static func writeContext(in t: TempDir) throws {
        try t.write(
            "ingress/ingress-stand-in",
            """
            #!/bin/sh
            mkdir -p /tmp/health /tmp/www
            echo ok > /tmp/health/healthz
            echo ingress-stand-in > /tmp/www/index.html
            httpd -p 9765 -h /tmp/health
            exec httpd -f -p 80 -h /tmp/www

            """)
        try t.write(
            "ingress/Containerfile",
            """
            FROM busybox:1.35
            COPY ingress-stand-in /usr/local/bin/ingress-stand-in
            RUN chmod 755 /usr/local/bin/ingress-stand-in
            ENTRYPOINT ["/usr/local/bin/ingress-stand-in"]

            """)
    }

    /// On the real node, the example stack's images become ones the node holds: the kit's test-container
    /// (busybox httpd on port 80, wget for the healthcheck) for nginx, and busybox 1.35 for the job.
    static func useLocalImages(in t: TempDir, deployment dep: String) throws {
        guard RealNode.enabled else { return }
        for file in [
            "\(dep)/compose/docker-compose-example.yml", "\(dep)/compose-jobs/docker-compose-example-migrate.yml",
        ] {
            try t.write(
                file,
                try t.read(file).replacingOccurrences(
                    of: "image: nginx:1.27-alpine", with: "image: docker.io/cerc/test-container:local"
                )
                .replacingOccurrences(of: "image: busybox:1.36", with: "image: busybox:1.35"))
        }
    }

    /// Removes the controller `so` installs (its namespace and its cluster-scoped objects), waiting for the
    /// namespace to go, so the next test starts on a cluster without one and no hostPort 80 is left held.
    static func remove() {
        let kubectl = [
            "kubectl", "--kubeconfig", E2E.kubeconfig ?? "", "delete", "--ignore-not-found", "--wait=true",
            "--timeout=120s",
        ]
        for args in [
            ["namespace", "caddy-system"], ["clusterrolebinding,clusterrole", "so:caddy-ingress-controller"],
            ["ingressclass", "caddy"],
        ] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = kubectl + args
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try? p.run()
            p.waitUntilExit()
        }
    }
}
