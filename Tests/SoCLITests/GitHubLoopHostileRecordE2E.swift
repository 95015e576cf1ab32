import Foundation
import SoBasics
import SoGitHub
import SoSystem
import SoTestSupport
import Testing

@testable import SoDeploy

/// Issue 68 in the GitHub loop's walk (`GitHubLoopE2ETests.walk`): a teammate who may write Secrets in the workspace's
/// namespace rewrites its record; the loop, restarted on a machine with no directory of the workspace, is given a task
/// on it by a trusted comment.
extension GitHubLoopE2ETests {
    /// The revision (a stack inside the directory whose `pre_start_command` runs on whoever starts it, and a compose
    /// config read from a file of the loop's machine) is refused: the pass says so, the issue gets one comment saying
    /// nothing ran (none of the record's text), the delivery is `failed`, no task is queued, no directory is made, no
    /// command of the record runs and the file is in no object of the cluster. Then the record's latest files are
    /// written again as the next revision (the loop's own, by content), and the walk goes on.
    static func hostileRecord(_ run: Run, issue: Int) async throws {
        let ws = run.workspace
        let home = run.env["SO_HOME"] ?? ""
        let elsewhere = run.t.file("home-elsewhere")
        let secretText = "LOOP-SECRET-\(UInt32.random(in: 0...UInt32.max))"
        try run.t.write("loop-secret", secretText + "\n")
        let (secret, ran) = (run.t.file("loop-secret"), run.t.file("ran"))
        // The latest revision's files, as a machine with no directory of the workspace makes them.
        run.env["SO_HOME"] = run.t.file("home-read")
        defer { run.env["SO_HOME"] = home }
        var r = try await run.so(["deployment", "--name", ws, "history", "-o", "json"])
        let heads = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
        let latest = try #require(heads.compactMap { $0["revision"] as? Int }.max(), "\(r.stdout)\(r.stderr)")
        let files = try RecordFiles.collect(
            run.t.file("home-read/deployments/\(ws)"), fs: LocalFileSystem(), secretKeys: [])
        let base = Dictionary(files.map { ($0.path, String(decoding: $0.data, as: UTF8.self)) }) { a, _ in a }
        let id = try #require(HostileRecordE2ETests.id(in: base["deployment.yml"] ?? ""))
        let compose = try #require(base.keys.sorted().first { $0.hasPrefix("compose/") }, "\(base.keys.sorted())")
        var hostile = base
        for (path, text) in try HostileRecordE2ETests.startingStack(base, compose: compose, ran: ran) {
            hostile[path] = text
        }
        hostile[compose] = try #require(base[compose]) + "configs:\n  k:\n    file: \(secret)\n"
        try await HostileRecordE2ETests.plant(
            hostile, id: id, namespace: ws, revision: latest + 1, host: "writer-box", in: run.t)

        let before = try run.github.comments(on: issue, repo: run.repo)
        let (_, sent) = try await run.github.send(
            "comment", ["number": issue, "body": "/so Add a line.", "association": "OWNER"])
        #expect(sent.map(\.status) == [202], "\(sent)")
        run.env["SO_HOME"] = elsewhere
        let said = try await run.pass()
        run.env["SO_HOME"] = home
        #expect(
            said.contains(
                "task \(ws) failed: revision \(latest + 1) of \(id) (start by mallory on writer-box, as it says)")
                && said.contains("is refused: \(compose) configs.k.file reads \(secret)"), "\(said)")
        let comments = try run.github.comments(on: issue, repo: run.repo)
        #expect(comments.count == before.count + 1, "one comment: \(comments.dropFirst(before.count))")
        let answer = comments.last ?? ""
        #expect(
            answer.hasPrefix("Nothing ran for this: the cluster's record of the workspace `\(ws)`")
                && !answer.contains("mallory") && !answer.contains(run.t.path), "\(answer)")
        #expect(try await run.state(of: sent[0].delivery) == ["failed"])
        #expect(try await run.tasks() == ["succeeded", "succeeded"], "no task queued")
        let fs = LocalFileSystem()
        #expect(!fs.exists(Path.join(elsewhere, "deployments/\(ws)")), "nothing made from the record")
        #expect(!((try? fs.walk(elsewhere)) ?? []).contains { $0.relative.contains(".pulling") }, "no scratch left")
        #expect(!fs.exists(ran), "no command of the record ran")
        #expect(try await HostileRecordE2ETests.inNoObject(secretText), "the file is in no object of the cluster")

        // The walk's later steps count the inbox's entries and use the loop's directory, in step with the record.
        r = try await E2E.kubectl(["-n", GitHubInbox.namespace, "get", "secrets", "-l", run.inboxLabel, "-o", "json"])
        let items = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["items"]
        let entry = (items as? [[String: Any]] ?? []).compactMap { $0["metadata"] as? [String: Any] }.first {
            ($0["annotations"] as? [String: String])?[GitHubInbox.deliveryAnnotation] == sent[0].delivery
        }
        let name = try #require(entry?["name"] as? String, "the delivery's entry: \(r.stdout.prefix(2000))")
        r = try await E2E.kubectl(["-n", GitHubInbox.namespace, "delete", "secret", name])
        #expect(r.exitCode == 0, "\(r.stderr)")
        try await HostileRecordE2ETests.plant(
            files: files, id: id, namespace: ws, revision: latest + 2, host: "writer-box", in: run.t)
    }
}
