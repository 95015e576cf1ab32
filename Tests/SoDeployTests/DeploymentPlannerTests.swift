import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// `--dry-run` changes nothing: no write on the cluster (only reads and server-side dry runs), no file.
@Suite struct DryRunTests {
    /// The deployment's Deployment edited by hand (replicas 7), as `kubectl scale` would.
    static func scaleByHand(_ c: ClusterHarness, namespace ns: String) throws {
        let deployment = try #require(c.cluster.all.filter { $0.0.type.kind == "Deployment" }.map(\.1).first)
        c.cluster.update("Deployment", deployment.name, namespace: ns) { json in
            guard case .object(var o) = json, case .object(var spec)? = o["spec"] else { return }
            spec["replicas"] = .number(7)
            o["spec"] = .object(spec)
            json = .object(o)
        }
    }

    /// Calls that change the cluster.
    static func writes(_ calls: [String]) -> [String] {
        calls.filter { ["apply ", "create ", "update ", "patch ", "delete "].contains(where: $0.hasPrefix) }
    }

    @Test func startDryRunOnANewNamespaceWritesNothing() async throws {
        let c = try await ClusterHarness()
        let plan = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: c.options, dryRun: true))
            .plan
        #expect(Self.writes(c.cluster.calls).isEmpty, "\(c.cluster.calls)")
        #expect(c.cluster.calls.contains("dry-run Namespace \(NameRules.dnsLabel(c.id))"))
        #expect(plan.first?.line == "would create Namespace \(NameRules.dnsLabel(c.id))")
        // Objects in a namespace that does not exist yet cannot be judged by the server: said so, not hidden.
        #expect(
            plan.contains {
                $0.kind == "Deployment" && $0.action == .create && $0.note == "not checked: its namespace is new"
            })
    }

    /// A kind deployment whose cluster does not run yet: `start --dry-run` says it would create it, as `start`
    /// would, and checks nothing; with `--skip-cluster-management` the dry run fails as that start would.
    @Test func aClusterNotRunningYetIsPlannedAsStartWouldTreatIt() async throws {
        let c = try await ClusterHarness()
        c.h.processes.missing = []
        c.h.processes.expect(["kind", "get", "clusters"], stdout: "")
        let plan = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), dryRun: true)
        ).plan
        #expect(
            !plan.isEmpty
                && plan.allSatisfy { $0.action == .create && $0.note == "not checked: the cluster does not exist yet" },
            "\(plan.map(\.line))")
        #expect(c.cluster.calls.isEmpty, "\(c.cluster.calls)")
        c.h.processes.expect(["kind", "get", "clusters"], stdout: "")
        await #expect {
            _ = try await StartAction(c.ctx).run(
                StartRequest(
                    directory: "dep", cluster: ClusterOptions(performClusterManagement: false),
                    dryRun: true))
        } throws: { e in
            (e as? SoError)?.message.hasPrefix("no cluster to use; tried") == true
        }
        #expect(
            c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty,
            "\(c.h.processes.unexpected) \(c.h.processes.pending)")
    }

    @Test func startDryRunAfterAStartSeesUnchangedChangedAndPruned() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        // Something of ours that left the manifest, and a Deployment edited by hand.
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "ConfigMap", name: "gone", namespace: ns,
                labels: [("app", c.id), ("app.kubernetes.io/instance", c.id), ("app.kubernetes.io/managed-by", "so")]))
        try Self.scaleByHand(c, namespace: ns)
        let before = c.cluster.calls.count
        let plan = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: c.options, dryRun: true))
            .plan
        #expect(Self.writes(Array(c.cluster.calls[before...])).isEmpty)
        #expect(plan.contains { $0.kind == "Deployment" && $0.action == .configure }, "\(plan.map(\.line))")
        #expect(plan.contains { $0.kind == "Namespace" && $0.action == .unchanged }, "\(plan.map(\.line))")
        #expect(
            plan.contains { $0.line == "would delete ConfigMap \(ns)/gone (no longer in the deployment)" },
            "\(plan.map(\.line))")
        #expect(PlannedChange.changes(plan))
        // Only a prune or only a kept object: a change, and not one.
        let gone = PlannedChange(action: .delete, kind: "ConfigMap", name: "gone", namespace: ns)
        #expect(
            PlannedChange.changes([gone])
                && !PlannedChange.changes([
                    PlannedChange(action: .keep, kind: "PersistentVolumeClaim", name: "data", namespace: ns)
                ]))
        #expect(c.cluster.object("ConfigMap", "gone", namespace: ns) != nil)
    }

    /// Right after a start, the dry run judges every object with start's own test: all unchanged, nothing
    /// sent to the server for judgement, nothing to prune (the generated Secret included).
    @Test func startDryRunRightAfterAStartSaysUnchangedForEveryObject() async throws {
        let c = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        _ = try await c.start()
        let before = c.cluster.calls.count
        let plan = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: c.options, dryRun: true))
            .plan
        #expect(!plan.isEmpty && plan.allSatisfy { $0.action == .unchanged }, "\(plan.map(\.line))")
        #expect(!PlannedChange.changes(plan), "--detailed-exitcode exits 0")
        #expect(plan.contains { $0.kind == "Secret" && $0.name == "\(c.id)-generated-secrets" })
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("dry-run") }, "\(c.cluster.calls[before...])")
    }

    /// `--diff`: each changed field, old then new; a Secret's values never appear, only that they changed.
    @Test func startDryRunDiffShowsFieldsAndNeverSecretValues() async throws {
        let c = try await ClusterHarness(
            appendToSpec: "secret-env: [API_TOKEN]\n", environment: ["API_TOKEN": "first-token-4711"])
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        try Self.scaleByHand(c, namespace: ns)
        // The host's value changed since: the Secret would be configured.
        var ctx = c.ctx
        ctx.environment["API_TOKEN"] = "second-token-4712"
        let plan = try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: c.options, dryRun: true, diff: true)
        ).plan
        let d = try #require(plan.first { $0.kind == "Deployment" })
        #expect(d.action == .configure)
        // Its pods read the Secret: they would roll onto its next revision.
        let secretRef = "secret/\(c.id)-generated-secrets"
        #expect(d.diff?.prefix(2) == ["- spec.replicas: 7", "+ spec.replicas: 1"], "\(d.diff ?? [])")
        #expect(
            d.diff?.count == 4 && d.diff?[2].contains("\(secretRef)=1") == true
                && d.diff?[3].contains("\(secretRef)=2") == true, "\(d.diff ?? [])")
        let s = try #require(plan.first { $0.kind == "Secret" && $0.name == "\(c.id)-generated-secrets" })
        #expect(s.action == .configure, "\(plan.map(\.line))")
        #expect(
            s.diff == [
                "~ data.API_TOKEN: (secret value changed)", "- metadata.annotations.so.dev/revision: \"1\"",
                "+ metadata.annotations.so.dev/revision: \"2\"",
            ], "\(s.diff ?? [])")
        let all = plan.flatMap { [$0.line] + ($0.diff ?? []) }.joined(separator: "\n")
        for value in ["first-token-4711", "second-token-4712"] {
            #expect(!all.contains(value) && !all.contains(Data(value.utf8).base64EncodedString()))
        }
        #expect(
            plan.filter { $0.kind != "Deployment" && $0.kind != "Secret" }.allSatisfy { $0.action == .unchanged },
            "\(plan.map(\.line))")
    }

    /// "Kind/name" of what a plan names, by what start would do with it.
    static func planned(_ plan: [PlannedChange]) -> [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for p in plan {
            let what =
                p.action == .create || p.action == .configure ? "applied" : p.action == .delete ? "pruned" : "unchanged"
            out[what, default: []].insert(p.kind + "/" + p.name)
        }
        return out
    }

    /// "Kind/name" of what a start did (a Job that ran already counts as unchanged, as the plan says).
    static func done(_ r: StartReport) -> [String: Set<String>] {
        func key(_ ref: String) -> String {
            let parts = ref.split(separator: " ", maxSplits: 1)
            return "\(parts.first ?? "")/\(parts.last?.split(separator: "/").last ?? "")"
        }
        var out: [String: Set<String>] = [:]
        for (what, refs) in [("applied", r.applied), ("unchanged", r.unchanged + r.skipped), ("pruned", r.pruned)]
        where !refs.isEmpty {
            out[what] = Set(refs.map(key))
        }
        return out
    }

    /// The dry run and start over the same fake cluster states: the plan names exactly what start then does
    /// (one code decides create, configure, unchanged and delete).
    @Test func theDryRunNamesExactlyWhatStartThenDoes() async throws {
        let c = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        let ns = NameRules.dnsLabel(c.id)
        func compare(_ state: String) async throws {
            try await c.ctx.clock.sleep(seconds: 60)  // a later start: its started-at differs
            let before = c.cluster.calls.count
            let plan = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: c.options, progress: .plain, dryRun: true)
            ).plan
            #expect(Self.writes(Array(c.cluster.calls[before...])).isEmpty, "\(state): \(c.cluster.calls[before...])")
            let report = try await c.start()
            #expect(Self.planned(plan) == Self.done(report), "\(state)")
        }
        try await compare("a new namespace")
        try await compare("right after a start")
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "ConfigMap", name: "gone", namespace: ns,
                labels: [("app", c.id), ("app.kubernetes.io/instance", c.id), ("app.kubernetes.io/managed-by", "so")]))
        try Self.scaleByHand(c, namespace: ns)
        try await compare("a Deployment edited by hand, and an object left over")
        try c.h.tmp.write("dep/config.env", (try c.h.read("dep/config.env")) + "NEW_SETTING=on\n")
        try await compare("a setting changed")
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.read("dep/spec.yml").replacingOccurrences(
                of: "config:\n", with: "config:\n  PIN: $generate:hex:8$\n"))
        try await compare("a value to generate")
    }

    @Test func aServerRefusalIsAnError() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        // Only what differs is sent for the server's judgement: a Deployment edited since.
        try c.h.tmp.write("dep/config.env", (try c.h.read("dep/config.env")) + "NEW_SETTING=on\n")
        c.cluster.failures["dry-run Deployment"] = SoError(
            "cannot apply (dry run) Deployment x: spec.template.spec.hostAliases[0].ip: Invalid value (Invalid)")
        await #expect(throws: SoError.self) {
            try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: c.options, dryRun: true))
        }
    }

    @Test func stopDryRunListsAndKeeps() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let before = c.cluster.calls.count
        let listed = try await StopAction(c.ctx).run(
            StopRequest(
                directory: "dep", cluster: c.options, deleteVolumes: true, deleteNamespace: true, dryRun: true,
                volumeGuard: nil))
        #expect(!listed.isEmpty && listed.contains { $0.hasPrefix("Deployment ") })
        #expect(Self.writes(Array(c.cluster.calls[before...])).isEmpty, "\(c.cluster.calls[before...])")
        #expect(c.h.console.stdout.contains("would delete Namespace \(NameRules.dnsLabel(c.id))"))
        #expect(!c.cluster.all.filter { $0.0.type.kind == "Deployment" }.map(\.1).isEmpty)
    }

    @Test func initAndCreateDryRunWriteNothing() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        var initReq = InitRequest(stack: "example", output: "spec.yml")
        initReq.dryRun = true
        try await InitAction(h.ctx).run(initReq)
        #expect(!h.fs.exists(h.path("spec.yml")))
        #expect(h.console.stdout.contains("would write spec.yml:\nstack: "))
        try await h.initAndCreate("example")
        var create = CreateRequest(specFile: "spec.yml", deploymentDir: "other")
        create.dryRun = true
        let r = try await CreateAction(h.ctx).run(create)
        #expect(!h.fs.exists(h.path("other")) && r.added.contains("deployment.yml"))
        #expect(try h.fs.list(h.path(".")).allSatisfy { !$0.contains("creating") })
        // --update --dry-run names the changes and makes none.
        try h.tmp.write("dep/compose/extra.yml", "x: 1\n")
        var update = CreateRequest(specFile: "dep/spec.yml", deploymentDir: "dep", update: true)
        update.dryRun = true
        let u = try await CreateAction(h.ctx).run(update)
        #expect(u.removed == ["compose/extra.yml"] && h.fs.exists(h.path("dep/compose/extra.yml")))
    }
}
