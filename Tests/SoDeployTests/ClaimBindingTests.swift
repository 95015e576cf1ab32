import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// New claims are bound before the workloads go out on a one-node cluster; elsewhere the scheduler chooses.
@Suite struct ClaimBindingTests {
    /// A harness whose API server answers new claims as Pending (as a WaitForFirstConsumer class does)
    /// and binds a claim once a node is named on it, like a provisioner.
    static func harness(nodes: [String], stack: String = "example", config: [String] = []) async throws
        -> ClusterHarness
    {
        let c = try await ClusterHarness(stack: stack, config: config)
        let healthy = c.cluster.onApply
        c.cluster.onApply = { json in
            healthy?(&json)
            guard case .object(var o) = json, o["kind"]?.string == "PersistentVolumeClaim", o["status"] == nil else {
                return
            }
            o["status"] = .object(["phase": .string("Pending")])
            json = .object(o)
        }
        let cluster = c.cluster
        c.cluster.beforeCall = { call in
            // The provisioner: a claim listed after its node was named is Bound.
            guard call.hasPrefix("list PersistentVolumeClaim") else { return }
            for (key, pvc) in cluster.all
            where key.type.kind == "PersistentVolumeClaim"
                && pvc.at("metadata", "annotations", ClaimBinding.selectedNode) != nil
            {
                cluster.update("PersistentVolumeClaim", key.name, namespace: key.namespace) { p in
                    guard case .object(var o) = p else { return }
                    o["status"] = .object(["phase": .string("Bound")])
                    p = .object(o)
                }
            }
        }
        for n in nodes { try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Node", name: n)) }
        return c
    }

    @Test func oneNodeNamesItOnNewClaimsAndAppliesWorkloadsOnceTheyAreBound() async throws {
        let c = try await Self.harness(nodes: ["so-control-plane"])
        _ = try await c.start()
        let claims = c.cluster.all.filter { $0.0.type.kind == "PersistentVolumeClaim" }
        #expect(!claims.isEmpty)
        for (_, pvc) in claims {
            #expect(pvc.at("metadata", "annotations", ClaimBinding.selectedNode)?.string == "so-control-plane")
            #expect(pvc.at("status", "phase")?.string == "Bound")
        }
        let calls = c.cluster.calls
        let named = try #require(calls.lastIndex(where: Self.naming))
        let bound = try #require(calls.firstIndex { $0.hasPrefix("list PersistentVolumeClaim") })
        let deployment = try #require(calls.firstIndex { $0.hasPrefix("apply Deployment") })
        #expect(named < bound && bound < deployment, "\(calls)")

        // A re-start finds the claims bound: no node list, no patch.
        let before = c.cluster.calls.count
        _ = try await c.start()
        let again = c.cluster.calls.dropFirst(before)
        #expect(
            !again.contains { $0.hasPrefix("list Node") || $0.hasPrefix("patch PersistentVolumeClaim") },
            "\(Array(again))")
    }

    /// A workspace's egress proxy mounts no volume: its pod starts while the workspace's volume is made.
    @Test func aWorkloadThatMountsNoNewClaimGoesOutWhileTheyAreMade() async throws {
        let c = try await Self.harness(
            nodes: ["so-node"], stack: "agent-workspace", config: ["GIT_REPO=https://example.invalid/acme/app"])
        _ = try await c.start()
        let calls = c.cluster.calls
        let proxy = try #require(calls.firstIndex { $0.hasPrefix("apply Deployment") && $0.contains("egress-proxy") })
        let agent = try #require(
            calls.firstIndex { $0.hasPrefix("apply Deployment") && $0.contains("agent-workspace") })
        let named = try #require(calls.lastIndex(where: Self.naming))
        let bound = try #require(calls.lastIndex { $0.hasPrefix("list PersistentVolumeClaim") })
        #expect(named < proxy && named < bound && bound < agent, "\(calls)")
    }

    /// A claim is named on the node as soon as its own apply answers: the provisioner's wait does not also wait for
    /// the rest of the claim's batch (here its Services, held until the claim is named or 2 s have passed).
    @Test func aClaimIsNamedOnTheNodeBeforeTheRestOfItsBatchIsIn() async throws {
        let c = try await Self.harness(
            nodes: ["so-node"], stack: "agent-workspace", config: ["GIT_REPO=https://example.invalid/acme/app"])
        // Services are applied at once: each call's answer is added under a lock (TSan saw the appends race).
        let seen = Collected<Bool>()
        let cluster = c.cluster
        cluster.beforeCallAsync = { call in
            guard call.hasPrefix("apply Service") else { return }
            var named = false
            for _ in 0..<200 where !named {
                named = cluster.calls.contains(where: Self.naming)
                if !named { try? await Task.sleep(nanoseconds: 10_000_000) }  // a cancelled test ends the wait early
            }
            seen.add(named)
        }
        _ = try await c.start()
        #expect(!seen.values.isEmpty && !seen.values.contains(false), "\(seen.values) \(c.cluster.calls)")
    }

    /// A call that names a claim's node: the first start's create of it (`ClaimBinding.ahead`), or a patch of a claim
    /// its apply made.
    @Sendable static func naming(_ call: String) -> Bool {
        call.hasPrefix("create PersistentVolumeClaim") || call.hasPrefix("patch PersistentVolumeClaim")
    }

    /// A first start makes its new claims as soon as it holds its Lease, the node named in the create (one request
    /// where an apply and a patch were): the record's first revision is held at the fake API server until the claim's
    /// create has arrived (before, the claim came with the apply, after the revision: the hold ran out).
    @Test func aFirstStartMakesItsClaimsAsItTakesItsLease() async throws {
        let c = try await Self.harness(
            nodes: ["so-node"], stack: "agent-workspace", config: ["GIT_REPO=https://example.invalid/acme/app"])
        let cluster = c.cluster
        let held = Collected<String>()
        cluster.beforeCallAsync = { call in
            guard call.hasPrefix("create Secret"), call.contains("/so.record.") else { return }
            for _ in 0..<1000 {
                if cluster.calls.contains(where: { $0.hasPrefix("create PersistentVolumeClaim") }) { return }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            held.add(call)
        }
        _ = try await c.start()
        #expect(held.values.isEmpty, "\(held.values) \(cluster.calls)")
        let calls = cluster.calls
        #expect(!calls.contains { $0.hasPrefix("patch PersistentVolumeClaim") }, "\(calls)")
        let lease = try #require(calls.firstIndex { $0.hasPrefix("create Lease") }, "\(calls)")
        let made = try #require(calls.firstIndex { $0.hasPrefix("create PersistentVolumeClaim") }, "\(calls)")
        #expect(lease < made, "\(calls)")
        for (key, pvc) in cluster.all where key.type.kind == "PersistentVolumeClaim" {
            #expect(pvc.at("metadata", "annotations", ClaimBinding.selectedNode)?.string == "so-node")
            #expect(pvc.at("status", "phase")?.string == "Bound")
        }
    }

    /// Made before the policies only where that admits nothing they would refuse: a LimitRange that judges claims,
    /// a PersistentVolume, or a quota the claims exceed keeps them in the apply.
    @Test func claimsGoAheadOnlyWhereThePoliciesWouldAdmitThem() {
        let claim = KubeObject(
            .persistentVolumeClaim, name: "data", namespace: "ns",
            body: [("spec", .map([("resources", .map([("requests", .map([("storage", .string("2Gi"))]))]))]))])
        func limits(_ type: String) -> KubeObject {
            KubeObject(
                .limitRange, name: "limits", namespace: "ns",
                body: [("spec", .map([("limits", .list([.map([("type", .string(type))])]))]))])
        }
        func quota(_ storage: String) -> KubeObject {
            KubeObject(
                .resourceQuota, name: "quota", namespace: "ns",
                body: [("spec", .map([("hard", .map([("requests.storage", .string(storage))]))]))])
        }
        #expect(StartSteps.claimsAhead([claim, limits("Container"), quota("10Gi")]))
        #expect(!StartSteps.claimsAhead([claim, limits("PersistentVolumeClaim")]))
        #expect(!StartSteps.claimsAhead([claim, quota("1Gi")]))
        #expect(!StartSteps.claimsAhead([claim, KubeObject(.persistentVolume, name: "pv")]))
    }

    @Test func severalNodesLeaveTheChoiceToTheScheduler() async throws {
        let c = try await Self.harness(nodes: ["a", "b"])
        _ = try await c.start()
        #expect(c.cluster.calls.contains("list Node"))
        #expect(!c.cluster.calls.contains { $0.hasPrefix("patch PersistentVolumeClaim") })
        for (key, pvc) in c.cluster.all where key.type.kind == "PersistentVolumeClaim" {
            #expect(pvc.at("metadata", "annotations", ClaimBinding.selectedNode) == nil)
        }
    }

    @Test func aUserWhoMayNotListNodesStartsAsBefore() async throws {
        let c = try await Self.harness(nodes: ["so-control-plane"])
        c.cluster.failures["list Node"] = SoError(
            "nodes is forbidden: User \"dev\" cannot list resource \"nodes\" (Forbidden)")
        _ = try await c.start()
        #expect(!c.cluster.calls.contains { $0.hasPrefix("patch PersistentVolumeClaim") })
    }
}

/// Values added from concurrent calls of the fake API server, under a lock.
private final class Collected<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var added: [T] = []
    var values: [T] { lock.withLock { added } }
    func add(_ value: T) { lock.withLock { added.append(value) } }
}
