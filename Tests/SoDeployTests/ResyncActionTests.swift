import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct ResyncTests {
    /// restart refreshes D from the changed stack, re-applies (pruning what left) and rolls the pods.
    @Test func restartResyncsFromTheStackSource() async throws {
        let c = try await ClusterHarness()
        // A private copy of the example stack as the deployment's source.
        let src = c.h.path("src")
        let fs = LocalFileSystem()
        for rel in [
            "stacks/example/stack.yml", "compose/docker-compose-example.yml",
            "compose-jobs/docker-compose-example-migrate.yml",
            "config/example/default.conf", "config/example/index.html",
        ] {
            try fs.write(try fs.readData(Path.join(RepoPaths.root, rel)), to: Path.join(src, rel))
        }
        try await InitAction(c.ctx).run(InitRequest(stack: Path.join(src, "stacks/example"), output: "spec2.yml"))
        try await CreateAction(c.ctx).run(CreateRequest(specFile: "spec2.yml", deploymentDir: "dep2"))
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep2", cluster: c.options, progress: .plain))
        let id = try DeploymentFile.load(c.h.path("dep2/deployment.yml"), fs: fs, diagnostics: DiagnosticSink())
            .deploymentID
        #expect(c.cluster.object("Job", "\(id)-job-example-migrate", namespace: id) != nil)

        // The stack drops its job and changes the page.
        try c.h.tmp.write(
            "src/stacks/example/stack.yml",
            try c.h.read("src/stacks/example/stack.yml").replacingOccurrences(
                of: "jobs:\n  - example-migrate\n", with: ""))
        try c.h.tmp.write("src/config/example/index.html", "<p>new</p>\n")
        c.h.processes.expect(
            ["git", "-C", Path.join(src, "stacks/example"), "rev-parse", "--show-toplevel"], exitCode: 128,
            stderr: "fatal: not a git repository")
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
