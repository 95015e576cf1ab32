import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// kind's cluster is created once per host: two runs of two deployments (each naming its own cluster) that
/// both find none serialise on the host's lock, and the one that waited uses the cluster the other made.
@Suite struct KindCreationLockTests {
    @Test func twoRunsCreateTheKindClusterOnce() async throws {
        let c = try await ClusterHarness()
        let model = try RenderAction(c.ctx).model("dep")
        let name = model.spec.kindClusterName ?? model.identity.clusterID
        let other = {
            var m = model
            m.identity.clusterID = "laconic-another-deployments-cluster"
            return m
        }()
        final class Kind: @unchecked Sendable {
            let lock = NSLock()
            var made: [String] = []
            var listed: String { lock.withLock { made.map { "\($0)\n" }.joined() } }
        }
        let kind = Kind()
        let p = c.h.processes
        p.missing = []
        p.fallback = { args in
            if args.starts(with: ["kind", "create", "cluster", "--name"]) {
                kind.lock.withLock { kind.made.append(args[4]) }
                try await Task.sleep(nanoseconds: 400_000_000)
                return ProcessResult(exitCode: 0)
            }
            if args == ["kind", "get", "clusters"] { return ProcessResult(exitCode: 0, stdout: kind.listed) }
            if args.starts(with: ["kind", "get", "kubeconfig", "--name"]) {
                return ProcessResult(
                    exitCode: 0,
                    stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(args[4])")
                )
            }
            return nil
        }
        var ctx = c.ctx
        ctx.hostLocks = FileHostLocks(directory: c.h.tmp.path)
        let targets = ClusterTargets(ctx: ctx)
        async let a = targets.createKind(model)
        async let b = targets.createKind(other)
        let (x, y) = try await (a, b)
        #expect(kind.made.count == 1, "\(kind.made)")
        let made = try #require(kind.made.first)
        #expect([name, other.identity.clusterID].contains(made))
        #expect(x.kindCluster == made && y.kindCluster == made)
        #expect(p.unexpected.isEmpty, "\(p.unexpected)")
        #expect(
            c.h.console.stdout.contains("using kind cluster '\(made)', which another so run created meanwhile"),
            "\(c.h.console.stdout)")
    }
}
