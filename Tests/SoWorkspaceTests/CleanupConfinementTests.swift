import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// `cleanup` removes directories whose paths come from the cluster (the namespace's annotation): a hostile
/// annotation never makes it remove anything outside `$SO_HOME/deployments/<label>`.
@Suite struct CleanupConfinementTests {
    @Test func hostileDirectoryAnnotationsRemoveNothingOutside() async throws {
        let w = try WorkspaceHarness()
        let home = w.h.path("so-home")
        try w.h.tmp.write("so-home/notes.txt", "not so's\n")
        try w.h.tmp.write("outside/data.txt", "elsewhere\n")
        let targets = [
            Path.join(home, "deployments", ".."), Path.join(home, "deployments"), Path.join(home, "deployments", "."),
            "/",
            w.h.path("outside"), Path.join(home, "deployments", "link"), Path.join(home, "deployments", "Upper"),
        ]
        try w.h.fs.createDirectory(Path.join(home, "deployments"))
        #expect(symlink(w.h.path("outside"), Path.join(home, "deployments", "link")) == 0)
        try w.h.tmp.write("so-home/deployments/Upper/keep.txt", "not a label\n")
        for (i, dir) in targets.enumerated() {
            try await w.up("victim-\(i)", ttl: 60)
            w.cluster.update("Namespace", "victim-\(i)", namespace: nil) { json in
                guard case .object(var o) = json, case .object(var meta)? = o["metadata"],
                    case .object(var a)? = meta["annotations"]
                else { return }
                a["laconic.com/deployment-dir"] = .string(dir)
                meta["annotations"] = .object(a)
                o["metadata"] = .object(meta)
                json = .object(o)
            }
        }
        try await w.clock.sleep(seconds: 120)
        var req = CleanupRequest()
        req.cluster = w.clusterOptions
        req.expired = true
        let removed = try await CleanupAction(w.ctx).run(req)
        #expect(removed.count == targets.count)
        for (i, _) in targets.enumerated() { #expect(w.cluster.object("Namespace", "victim-\(i)") == nil) }
        for f in ["so-home/notes.txt", "outside/data.txt", "so-home/deployments/Upper/keep.txt", "kubeconfig"] {
            #expect(w.h.tmp.exists(f), "\(f)")
        }
        #expect(w.h.fs.kind(Path.join(home, "deployments", "link")) == .symlink)
        // The workspaces' own directories (their annotations now point elsewhere) are the user's to remove by name.
        #expect(w.h.tmp.exists("so-home/deployments/victim-0/deployment.yml"))
        #expect(
            w.ctx.diagnostics.all.contains {
                $0.message.hasPrefix("refusing to remove \(Path.join(home, "deployments", "link")): it is a symlink")
            },
            "\(w.ctx.diagnostics.all.map(\.message))")
    }

    @Test func downRemovesADirectoryOnlyThroughItsName() async throws {
        let w = try WorkspaceHarness()
        try await w.up("mine")
        var req = DownRequest(name: "mine")
        req.cluster = w.clusterOptions
        req.discard = true
        try await DownAction(w.ctx).run(req)
        #expect(!w.h.tmp.exists("so-home/deployments/mine"))
        #expect(w.h.tmp.exists("kubeconfig"))
        for name in ["..", ".", "", "/abs", "a/../..", "~"] {
            var bad = DownRequest(name: name)
            bad.cluster = w.clusterOptions
            let calls = w.cluster.calls.count
            await #expect(throws: SoError.self) { try await DownAction(w.ctx).run(bad) }
            #expect(w.cluster.calls.count == calls, "\(name)")
        }
        #expect(w.h.tmp.exists("kubeconfig") && w.h.fs.isDirectory(w.h.path("so-home/deployments")))
    }
}
