import Foundation
import SoBasics
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoAuthoring
@testable import SoDeploy

/// `stack new --from` a plain compose project (ComposeProjects.shop): the laconic layout it writes, deployed as any
/// other stack. The suite keeps the name it has beside the compose stack's deploy tests (SoDeployTests).
@Suite struct ComposeStackTests {
    @Test func stackNewWritesTheLaconicLayout() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", ComposeProjects.shop)
        try h.tmp.write("app/secrets/db.txt", "hunter2-not-real\n")
        try h.tmp.write("app/init.sql", "create table t(x int);\n")
        try await StackNewAction(h.ctx).run(StackNewRequest(name: "shop", from: ["app/compose.yaml"]))
        #expect(try h.read("shop/stacks/shop/stack.yml").contains("pods:\n  - shop\npod-per-service: true\n"))
        let compose = try h.read("shop/compose/docker-compose-shop.yml")
        #expect(compose.contains("file: ../config/shop/init.sql"))
        #expect(compose.contains("file: \(LocalFileSystem().realpath(h.path("app")))/secrets/db.txt"))
        #expect(h.fs.isFile(h.path("shop/config/shop/init.sql")))
        #expect(!h.fs.exists(h.path("shop/config/shop/secrets")))
        // The new stack deploys like any other.
        try await InitAction(h.ctx).run(InitRequest(stack: "./shop/stacks/shop", output: "s.yml"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "s.yml", deploymentDir: "dep"))
        let model = try DeploymentLoader.load(h.path("dep"), fs: h.fs, diagnostics: DiagnosticSink())
        #expect(model.podPerService && model.pods.first?.compose.services.map(\.name) == ["db", "web"])
        await #expect(throws: SoError.self) {
            try await StackNewAction(h.ctx).run(StackNewRequest(name: "shop", from: ["app/compose.yaml"]))
        }
    }
}
