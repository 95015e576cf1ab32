import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDeploy
@testable import SoGitHub

/// The loop reaches a workspace it has no directory of through the cluster's record (a loop restarted on another
/// machine): a revision the record's gate refuses is refused there too, the task is never queued, and no directory
/// is left in the loop's `$SO_HOME/deployments`.
@Suite struct GitHubLoopRecordTests {
    @Test func aTaskOnARefusedRevisionIsRefusedAndMakesNothing() async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        _ = try await c.start()
        let store = RecordStore(client: c.cluster, namespace: c.id, deployment: c.id)
        let latest = try #require(try await store.heads().last)
        var files = Dictionary(
            try await store.read(latest).files.map { ($0.path, String(decoding: $0.data, as: UTF8.self)) }
        ) { a, _ in a }
        let compose = "compose/docker-compose-example.yml"
        files[compose] = try #require(files[compose]).replacingOccurrences(
            of: "    image:", with: "    privileged: true\n    image:")
        let record = DeploymentRecord(
            deployment: c.id, revision: latest.revision + 1, parent: latest.revision,
            writer: .init(user: "mallory", host: "laptop-b"), time: Date(timeIntervalSince1970: 1_800_000_000),
            verb: "start", files: files.map { .init(path: $0.key, data: Data($0.value.utf8)) })
        _ = try await store.write(record, changed: [], result: "started")
        var loop = c.ctx
        loop.environment["SO_HOME"] = c.h.path("home-loop")
        loop.hostName = "loop-box"
        let live = GitHubLoopLive(
            ctx: loop, client: c.cluster,
            config: GitHubLoopConfig(repositories: ["acme/web"], label: "so", stack: "agent-workspace"),
            cluster: c.options)
        let e = await #expect(throws: SoError.self) {
            _ = try await live.task(
                workspace: c.id, text: "do it", title: nil, pullRequest: false,
                issue: GitHubIssue(owner: "acme", name: "web", number: 7))
        }
        #expect(e?.exitCode == RecordGate.refused, "\(e.map(\.description) ?? "")")
        #expect(e?.message.contains("\(compose) services.web.privileged is true") == true, "\(e?.message ?? "")")
        #expect(!c.h.fs.exists(c.h.path("home-loop/deployments/\(c.id)")), "nothing made from the record")
        #expect(try !c.h.fs.walk(c.h.path("home-loop")).contains { $0.relative.contains(".pulling") })
    }
}
