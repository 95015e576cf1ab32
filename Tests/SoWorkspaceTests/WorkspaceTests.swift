import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

@Suite struct WorkspaceTests {
    @Test func upCreatesARestrictedIsolatedWorkspace() async throws {
        let w = try WorkspaceHarness()
        let began = w.clock.now()
        let r = try await w.up(
            "fix-login", ttl: 7200, with: ["postgres"], config: ["GIT_REPO=https://github.com/acme/web"])
        #expect(r.created && r.namespace == "fix-login" && r.directory == w.h.path("so-home/deployments/fix-login"))
        let ns = try #require(w.cluster.object("Namespace", "fix-login"))
        #expect(ns.labels["pod-security.kubernetes.io/enforce"] == "restricted")
        #expect(ns.annotations["so.dev/host"] == "laptop")
        // The TTL counts from the start (the wait that follows takes the fake clock's time).
        #expect(ns.annotations["so.dev/expires-at"] == Timestamps.rfc3339(began.addingTimeInterval(7200)))
        let kinds = Set(w.labelled().map { String($0.split(separator: " ")[0]) })
        #expect(
            kinds.isSuperset(of: [
                "ResourceQuota", "LimitRange", "NetworkPolicy", "Deployment", "Secret", "PersistentVolumeClaim",
            ]))
        // The API key went into the Secret (base64), and nowhere on disk or in output.
        let id = try #require(ns.labels["app.kubernetes.io/instance"])
        let secret = try #require(w.cluster.object("Secret", "\(id)-generated-secrets", namespace: "fix-login"))
        #expect(
            secret.at("data", "ANTHROPIC_API_KEY")?.string
                == Data("test-anthropic-key-not-real".utf8).base64EncodedString())
        for f in try w.h.fs.walk(w.h.path("so-home")) where f.kind == .file {
            #expect(
                !(try w.h.fs.readText(w.h.path("so-home/\(f.relative)"))).contains("test-anthropic-key-not-real"),
                "\(f.relative)")
        }
        #expect(
            !w.h.console.stdout.contains("test-anthropic-key") && !w.h.console.stderr.contains("test-anthropic-key"))
        // postgres was chosen, redis was not.
        #expect(w.cluster.object("Deployment", "\(id)-postgres-deployment", namespace: "fix-login") != nil)
        #expect(w.cluster.object("Deployment", "\(id)-redis-deployment", namespace: "fix-login") == nil)
        // Again: started as it is, nothing re-initialised, the generated secrets kept.
        let before = secret.at("data", "WORKSPACE_TOKEN")?.string
        let again = try await w.up("fix-login")
        #expect(!again.created)
        #expect(
            w.cluster.object("Secret", "\(id)-generated-secrets", namespace: "fix-login")?.at(
                "data", "WORKSPACE_TOKEN")?.string == before)
    }

    /// The same `up` run again (as a CI pipeline does) says nothing of its flags: only a `--config` whose
    /// value differs from the one the workspace holds, and `--with`, are named as not applied.
    @Test func upAgainNamesOnlyTheFlagsItDoesNotApply() async throws {
        let w = try WorkspaceHarness()
        try await w.up("ci-ws", config: ["GIT_REPO=https://example.invalid/acme/app.git"])
        let notApplied = { w.ctx.diagnostics.all.map(\.message).filter { $0.contains("not applied") } }
        try await w.up("ci-ws", config: ["GIT_REPO=https://example.invalid/acme/app.git"])
        #expect(notApplied().isEmpty, "\(notApplied())")
        try await w.up("ci-ws", with: ["redis"], config: ["GIT_REPO=https://example.invalid/acme/other.git"])
        #expect(notApplied() == ["ci-ws already exists; --config GIT_REPO, --with are not applied to it"])
    }

    @Test func listShowsEveryWorkspaceInTwoRequests() async throws {
        let w = try WorkspaceHarness()
        try await w.up("ws-1", ttl: 60)
        try await w.up("ws-2")
        let before = w.cluster.calls.count
        var rows = try await ListAction(w.ctx).run(cluster: w.clusterOptions)
        #expect(
            w.cluster.calls[before...].sorted() == [
                "list Namespace app.kubernetes.io/managed-by=so", "table Deployment app.kubernetes.io/managed-by=so",
            ])
        #expect(rows.map(\.name) == ["ws-1", "ws-2"])
        #expect(rows.allSatisfy { $0.ready && $0.stack == "agent-workspace" && $0.host == "laptop" })
        #expect(rows[0].expiresAt != nil && rows[1].expiresAt == nil)
        // Counted by the table's cells, per deployment (its pods' `app` selector): one of ws-2's Deployments
        // with a replica not available makes ws-2, and only it, not ready.
        let ws2 = rows[1].id
        let deployment = try #require(
            w.cluster.all.first { $0.0.type.kind == "Deployment" && $0.0.namespace == "ws-2" }?.0.name)
        w.cluster.update("Deployment", deployment, namespace: "ws-2") { d in
            guard case .object(var o) = d, case .object(var status)? = o["status"] else { return }
            status["availableReplicas"] = .number(0)
            o["status"] = .object(status)
            d = .object(o)
        }
        rows = try await ListAction(w.ctx).run(cluster: w.clusterOptions)
        #expect(rows[0].ready && !rows[1].ready && rows[1].deployments >= 1 && rows[1].id == ws2)
        #expect(rows[1].readyDeployments == rows[1].deployments - 1)
    }

    /// The deployment a row of the Deployments' table belongs to is the `app` term of its Selector cell.
    @Test func aTableRowBelongsToTheAppOfItsSelector() {
        #expect(ListAction.deploymentID(selector: "app=laconic-0f5,app.kubernetes.io/component=web") == "laconic-0f5")
        #expect(ListAction.deploymentID(selector: "app.kubernetes.io/component=web,app=x") == "x")
        #expect(ListAction.deploymentID(selector: "application=x,tier=app") == nil)
        #expect(ListAction.available(["Ready": .string("0/0")]))
        #expect(ListAction.available(["Ready": .string("1/2"), "Up-to-date": .number(2), "Available": .number(2)]))
        #expect(!ListAction.available(["Ready": .string("2/2"), "Up-to-date": .number(1), "Available": .number(2)]))
    }

    @Test func cleanupRemovesExactlyTheExpiredOnes() async throws {
        let w = try WorkspaceHarness()
        try await w.up("short", ttl: 60)
        try await w.up("long", ttl: 36000)
        try await w.up("forever")
        try await w.clock.sleep(seconds: 120)
        var req = CleanupRequest()
        req.cluster = w.clusterOptions
        req.expired = true
        req.dryRun = true
        #expect(try await CleanupAction(w.ctx).run(req).map(\.name) == ["short"])
        #expect(w.cluster.object("Namespace", "short") != nil)
        req.dryRun = false
        #expect(try await CleanupAction(w.ctx).run(req).map(\.name) == ["short"])
        #expect(w.cluster.object("Namespace", "short") == nil)
        #expect(!w.h.fs.exists(w.h.path("so-home/deployments/short")))
        #expect(w.cluster.object("Namespace", "long") != nil && w.cluster.object("Namespace", "forever") != nil)
        await #expect(throws: SoError.self) { try await CleanupAction(w.ctx).run(CleanupRequest()) }
    }

    /// Issue 32 (a thousand on one cluster): what cleanup asks the API server does not grow with the number of
    /// deployments beyond one delete each. The PersistentVolumes are listed once (each deployment's are deleted,
    /// no other's), and the wait lists the namespaces once a look instead of reading each one.
    @Test func cleanupOfManyListsOnceAndReadsNoNamespaceOneByOne() async throws {
        let w = try WorkspaceHarness()
        for i in 0..<12 { try await w.up("short-\(i)", ttl: 60) }
        try await w.up("forever")
        let rows = try await ListAction(w.ctx).run(cluster: w.clusterOptions)
        for row in rows where ["short-3", "short-7", "forever"].contains(row.name) {
            try w.cluster.seed(
                KubeObject(
                    apiVersion: "v1", kind: "PersistentVolume", name: "pv-\(row.name)", labels: [("app", row.id)]))
        }
        try await w.clock.sleep(seconds: 120)
        var req = CleanupRequest()
        req.cluster = w.clusterOptions
        req.expired = true
        let before = w.cluster.calls.count
        #expect(try await CleanupAction(w.ctx).run(req).count == 12)
        let calls = Array(w.cluster.calls[before...])
        #expect(calls.filter { $0.hasPrefix("list PersistentVolume") }.count == 1, "\(calls)")
        #expect(!calls.contains { $0.hasPrefix("get Namespace") }, "\(calls)")
        #expect(calls.filter { $0.hasPrefix("delete Namespace") }.count == 12)
        #expect(
            w.cluster.object("PersistentVolume", "pv-short-3") == nil
                && w.cluster.object("PersistentVolume", "pv-short-7") == nil)
        #expect(
            w.cluster.object("PersistentVolume", "pv-forever") != nil && w.cluster.object("Namespace", "forever") != nil
        )
    }

    @Test func orphansAreJudgedOnlyOnTheirOwnHost() async throws {
        var w = try WorkspaceHarness()
        try await w.up("mine")
        w.ctx.hostName = "other-host"
        try await w.up("theirs")
        w.ctx.hostName = "laptop"
        try w.h.fs.removeTree(w.h.path("so-home/deployments/mine"))
        try w.h.fs.removeTree(w.h.path("so-home/deployments/theirs"))
        var req = CleanupRequest()
        req.cluster = w.clusterOptions
        req.orphaned = true
        #expect(try await CleanupAction(w.ctx).run(req).map(\.name) == ["mine"])
        #expect(w.cluster.object("Namespace", "theirs") != nil)
    }

    @Test func downLeavesNothingLabelledAndIsSafeToRepeat() async throws {
        let w = try WorkspaceHarness()
        try await w.up("gone", with: ["redis"])
        var req = DownRequest(name: "gone")
        req.cluster = w.clusterOptions
        // The fake cluster runs no pods: the checkout cannot be read (WorkspaceGitTests covers that refusal).
        req.discard = true
        #expect(try await DownAction(w.ctx).run(req))
        #expect(w.labelled().isEmpty, "\(w.labelled())")
        #expect(!w.h.fs.exists(w.h.path("so-home/deployments/gone")))
        #expect(try await DownAction(w.ctx).run(req) == false)
        #expect(w.h.console.stdout.contains("gone does not exist; nothing to do"))
    }

    @Test func badNamesAndOptionalPodsAreRefused() async throws {
        let w = try WorkspaceHarness()
        await #expect(throws: SoError.self) { try await w.up("kube-system") }
        await #expect(throws: SoError.self) { try await w.up("Not_A_Name") }
        do {
            try await w.up("ws", with: ["postgress"])
            Issue.record("expected an error")
        } catch let e as SoError {
            #expect(e.message == "'postgress' is not an optional pod of this stack")
            #expect(e.hint?.contains("did you mean 'postgres'?") == true)
        }
        #expect(!w.h.fs.exists(w.h.path("so-home/deployments/ws")))
    }
}
