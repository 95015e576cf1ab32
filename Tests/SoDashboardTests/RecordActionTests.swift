import Foundation
import SoActions
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDeploy

/// The page acts on a deployment whose directory is on another host (or on no disk) through the cluster's record
/// of it, made into the dashboard's own `$SO_HOME/deployments/NAMESPACE`; and treats that record as hostile input.
@Suite struct RecordActionTests {
    static let podHost = "so-dashboard-6d4f"
    /// What the dashboard's own machine holds at paths a record may name (its service account's token).
    static let ownSecret = "DASHBOARD-OWN-SECRET-7f3a"

    /// The harness's deployment started on its host (revision 1 of its record); a dashboard on another machine.
    static func started(_ c: ClusterHarness) async throws -> (DashboardActions, PageContext) {
        _ = try await c.start()
        var dash = c.ctx
        dash.environment["SO_HOME"] = c.h.path("pod-home")
        dash.environment["SO_DASHBOARD_TOKEN"] = ownSecret
        dash.hostName = podHost
        let page = PageContext(now: Date(), csrf: "c", actions: true, hostName: podHost)
        return (DashboardActions(ctx: dash, cluster: c.options), page)
    }

    static func snapshot(_ c: ClusterHarness) async throws -> DashboardSnapshot {
        let feed = DashboardFeed(ctx: c.ctx, client: c.cluster, kubectlFlags: [], clusterName: "kind:so")
        await feed.read()
        return await feed.snapshot
    }

    /// Every value the cluster holds, decoded where it is base64, as one text.
    static func everything(_ c: FakeCluster) -> String {
        var out = ""
        for (_, json) in c.all {
            out += "\(json)\n"
            for (_, v) in json["data"]?.object ?? [:] {
                if let s = v.string, let d = Data(base64Encoded: s) { out += String(decoding: d, as: UTF8.self) + "\n" }
            }
        }
        return out
    }

    @Test func aDeploymentOfAnotherHostIsStoppedAndStartedThroughItsRecord() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        let (actions, page) = try await Self.started(c)
        let l = try #require(try await Self.snapshot(c).listing(c.id))
        #expect(l.host != Self.podHost && actions.owns(l, hostName: Self.podHost), "offered on the page")
        var snap = DashboardSnapshot()
        snap.listings = [l]
        var out = await actions.perform(["action": "stop", "namespace": c.id], snapshot: snap, page: page)
        #expect(out.ok, "\(out.message)")
        #expect(try await c.cluster.list(.deployment, namespace: c.id, labelSelector: nil).isEmpty)
        let made = c.h.path("pod-home/deployments/\(c.id)")
        #expect(try c.h.read("pod-home/deployments/\(c.id)/spec.yml") == (try c.h.read("dep/spec.yml")))
        // The host changes the deployment (revision 2): the page's copy is behind it, and is brought in step (the
        // page acts on what the cluster runs, not on what it made before).
        try c.h.tmp.write("dep/spec.yml", try c.h.read("dep/spec.yml") + "replicas: 2\n")
        _ = try await c.start()
        out = await actions.perform(["action": "start", "namespace": c.id], snapshot: snap, page: page)
        #expect(out.ok, "\(out.message)")
        #expect(try c.h.read("pod-home/deployments/\(c.id)/spec.yml").hasSuffix("replicas: 2\n"))
        #expect(RecordFiles.step(in: made, fs: c.h.fs)?.revision == 2, "the page's start wrote no revision of its own")
        let deployments = try await c.cluster.list(.deployment, namespace: c.id, labelSelector: nil)
        #expect(!deployments.isEmpty && deployments.allSatisfy { $0["spec"]?["replicas"]?.int == 2 })
    }

    @Test func aDeploymentWithNeitherADirectoryHereNorARecordIsOneLine() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        let (actions, page) = try await Self.started(c)
        try c.cluster.seed(DashboardFixture.namespace("unrecorded", id: "laconic-uuu", dir: "/w/dep", host: "laptop"))
        let l = try #require(try await Self.snapshot(c).listing("unrecorded"))
        var snap = DashboardSnapshot()
        snap.listings = [l]
        let out = await actions.perform(["action": "start", "namespace": "unrecorded"], snapshot: snap, page: page)
        #expect(!out.ok && !out.message.contains("\n"))
        #expect(
            out.message.hasPrefix(
                "\(l.name)'s directory is on laptop, and the cluster holds no record of it in namespace unrecorded"),
            "\(out.message)")
        #expect(!c.h.fs.exists(c.h.path("pod-home/deployments/unrecorded")))
    }

    /// A record someone wrote to make the page copy its own files out: each names a file of the dashboard's
    /// machine (here the token) in a way `so` would read at start; the host's start that wrote it read the host's
    /// copy, a start from the page would read the page's. Refused, naming the file and the key, before anything
    /// is applied; the page's own value reaches no object of the cluster.
    @Test(arguments: [
        ("credentials", "config.env credentials-files reads"),
        ("ca", "spec.yml ca-certificates reads"),
        ("hostpath", "spec.yml volumes.web-data is the host path /"),
    ])
    func aRecordNamingFilesOutsideItsDirectoryIsRefused(_ kind: String, _ said: String) async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        let token = c.h.path("serviceaccount/token")
        try c.h.tmp.write("serviceaccount/token", "HOSTS_OWN=host-value\n")
        switch kind {
        case "credentials":
            try c.h.tmp.write(
                "dep/config.env",
                try c.h.read("dep/config.env") + "# From credentials file: \(token)\n# credentials-keys: HOSTS_OWN\n")
        case "ca": try c.h.tmp.write("dep/spec.yml", try c.h.read("dep/spec.yml") + "ca-certificates: [\(token)]\n")
        case "hostpath":
            try c.h.tmp.write(
                "dep/spec.yml",
                try c.h.read("dep/spec.yml").replacingOccurrences(of: "  web-data:\n", with: "  web-data: /\n"))
        default: Issue.record("no case \(kind)")
        }
        let (actions, page) = try await Self.started(c)
        try c.h.tmp.write("serviceaccount/token", "HOSTS_OWN=\(Self.ownSecret)\n")
        let l = try #require(try await Self.snapshot(c).listing(c.id))
        var snap = DashboardSnapshot()
        snap.listings = [l]
        let before = c.cluster.calls.count
        let out = await actions.perform(["action": "start", "namespace": c.id], snapshot: snap, page: page)
        #expect(!out.ok && out.message.contains(said) && !out.message.contains("\n"), "\(kind): \(out.message)")
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply") }, "nothing applied")
        #expect(!Self.everything(c.cluster).contains(Self.ownSecret))
        #expect(!out.message.contains(Self.ownSecret))
    }

    /// `secret-env` names a variable of the page's own environment (its token): the start from the page keeps the
    /// value the cluster holds and never copies the page's.
    @Test func aRecordsSecretEnvNeverCopiesThePagesEnvironment() async throws {
        let c = try await ClusterHarness(appendToSpec: "secret-env: [SO_DASHBOARD_TOKEN]\n")
        defer { c.h.tmp.cleanup() }
        let (actions, page) = try await Self.started(c)
        let l = try #require(try await Self.snapshot(c).listing(c.id))
        var snap = DashboardSnapshot()
        snap.listings = [l]
        let out = await actions.perform(["action": "start", "namespace": c.id], snapshot: snap, page: page)
        #expect(out.ok, "\(out.message)")
        #expect(c.cluster.calls.contains { $0.hasPrefix("apply") })
        #expect(!Self.everything(c.cluster).contains(Self.ownSecret))
    }
}
