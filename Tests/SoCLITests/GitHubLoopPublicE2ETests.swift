import Foundation
import SoBasics
import SoGitHub
import SoTestSupport
import Testing

/// Issue 64, item 7: the loop on a public repository, on the real node, against the stand-in GitHub answering the
/// permission endpoint per login. What the walk (`anIssueBecomesAPullRequest…`) proves already is not repeated here:
/// an outsider's `/so`, a read-only collaborator's `/so`, a label an issue template put for an outsider, GitHub's own
/// redelivery. Each case is asserted on what GitHub would show (comments, pull requests, reactions, the answers to
/// its deliveries) and on what the workspace holds.
extension GitHubLoopE2ETests {
    @Test func onAPublicRepositoryOnlyWritersAndNamedBotsActAndThePodHoldsNoTokenOfTheLoops() async throws {
        try await Self.walk("so-e2e-github-public", extra: "forks: true\nbots: [\"helper[bot]\"]\n") { run in
            let (issue, pull) = try await Self.labelToPullRequest(run)
            try await Self.belowWriteAndBots(run, issue: issue, pull: pull)
            try await Self.aForksPullRequestUnderTheLoopsBranch(run, pull: pull)
            try await Self.aReplayUnderANewDeliveryID(run, issue: issue)
            try await Self.aFloodPastTheInboxBound(run, issue: issue)
            try await Self.noTokenInThePod(run, of: [Self.token], work: "Add a bot's line.")
        }
    }

    /// The REST calls of `path`'s reactions the loop made.
    static func reactions(_ run: Run, _ path: String) throws -> [[String: Any]] {
        try run.github.requests().filter {
            $0["method"] as? String == "POST" && $0["path"] as? String == "/repos/\(run.repo)/\(path)/reactions"
        }
    }

    /// The logins whose permission the loop asked of GitHub, once per ask.
    static func asked(_ run: Run) throws -> [String] {
        try run.github.requests().compactMap { $0["path"] as? String }.filter { $0.hasSuffix("/permission") }
            .map { $0.split(separator: "/").dropLast().last.map(String.init) ?? "" }
    }

    /// A triager's label (GitHub: triage) and an access-less member's `/so` (association MEMBER, GitHub: none): one
    /// reply each naming what GitHub gave, nothing started, no 👀. A bot the config does not name: its label and its
    /// `/so` (association NONE) are ignored, no reply, no permission asked. The bot it names (`helper[bot]`,
    /// association NONE, as GitHub gives an App's comment): its `/so` is the next task, its commit on the same
    /// branch and pull request, no permission asked.
    static func belowWriteAndBots(_ run: Run, issue: Int, pull: Int) async throws {
        let gh = run.github!
        try await gh.call("permission", ["login": "triager", "role": "triage"])
        try await gh.call("permission", ["login": "member", "role": "none"])
        let (triaged, triagerLabel) = try await gh.send(
            "label", ["title": "Triaged", "body": "x", "label": "so", "sender": "triager", "association": "NONE"])
        let (_, memberAsk) = try await gh.send(
            "comment", ["number": pull, "body": "/so push to main", "sender": "member", "association": "MEMBER"])
        let (botIssue, botLabel) = try await gh.send(
            "label", ["title": "Bump", "body": "x", "label": "so", "sender": "spam[bot]", "association": "NONE"])
        let (botAnswer, botAsk) = try await gh.send(
            "comment", ["number": pull, "body": "/so mine", "sender": "spam[bot]", "association": "NONE"])
        let sent = triagerLabel + memberAsk + botLabel + botAsk
        #expect(sent.map(\.status) == [202, 202, 202, 202], "\(sent)")
        let triagedIssue = triaged["number"] as? Int ?? 0
        let botsIssue = botIssue["number"] as? Int ?? 0
        let said = try await run.pass()
        #expect(
            said.contains("#\(triagedIssue): reply (delivery \(triagerLabel[0].delivery))")
                && said.contains("#\(pull): reply (delivery \(memberAsk[0].delivery))"), "\(said)")
        #expect(
            said.contains(
                "#\(botsIssue): ignore: @spam[bot] is a bot the config's bots: does not name (delivery "
                    + "\(botLabel[0].delivery))")
                && said.contains(
                    "#\(pull): ignore: @spam[bot] is a bot the config's bots: does not name (delivery "
                        + "\(botAsk[0].delivery))"),
            "\(said)")
        #expect(!said.contains(" start ") && !said.contains(": task "), "nothing started: \(said)")
        let onTriaged = try gh.comments(on: triagedIssue, repo: run.repo)
        #expect(
            onTriaged.count == 1 && onTriaged[0].hasPrefix("The label so was put by @triager")
                && onTriaged[0].contains("GitHub says @triager has triage"), "\(onTriaged)")
        let onPull = try gh.comments(on: pull, repo: run.repo)
        #expect(
            onPull.count == 1 && onPull[0].hasPrefix("Nothing ran for @member")
                && onPull[0].contains("GitHub says @member has none"), "\(onPull)")
        #expect(try gh.comments(on: botsIssue, repo: run.repo).isEmpty, "no reply to a bot")
        #expect(
            try Self.reactions(run, "issues/\(triagedIssue)").isEmpty
                && Self.reactions(run, "issues/\(botsIssue)").isEmpty
                && Self.reactions(run, "issues/comments/\(botAnswer["comment"] as? Int ?? 0)").isEmpty, "no 👀")
        var asked = try Self.asked(run)
        #expect(
            asked.filter { $0 == "triager" }.count == 1 && asked.filter { $0 == "member" }.count == 1
                && !asked.contains { $0.hasSuffix("[bot]") }, "\(asked)")
        for d in sent { #expect(try await run.state(of: d.delivery) == ["done"], "\(d)") }
        #expect(try await run.tasks() == ["succeeded"], "no task")
        #expect(
            try await E2E.kubectl(["get", "namespace", GitHubLoopThread.workspaceName(run.repo, issue: triagedIssue)])
                .exitCode != 0,
            "no workspace for the triaged issue")

        let (answer, named) = try await gh.send(
            "comment",
            ["number": issue, "body": "/so Add a bot's line.", "sender": "helper[bot]", "association": "NONE"])
        #expect(named.map(\.status) == [202])
        let took = try await run.pass()
        #expect(took.contains("task \(run.workspace) (delivery \(named[0].delivery))"), "\(took)")
        _ = try await run.passes(until: "\(run.workspace) is idle, its task ended")
        let subjects = try await run.subjects()
        #expect(
            subjects.count == 2 && subjects.last == "agent: Asked by @helper[bot] in a comment:", "\(subjects)")
        #expect(try await run.file("AGENT_TASKS.md").contains("Add a bot's line."))
        let eyes = try Self.reactions(run, "issues/comments/\(answer["comment"] as? Int ?? 0)")
        #expect(eyes.count == 1 && (eyes[0]["body"] as? [String: Any])?["content"] as? String == "eyes", "\(eyes)")
        let pulls = try await gh.pulls()
        #expect(pulls.count == 1 && pulls.first?["number"] as? Int == pull, "one pull request: \(pulls)")
        #expect(
            try gh.comments(on: issue, repo: run.repo).last?.contains("Task 2 in `\(run.workspace)` succeeded") == true)
        asked = try Self.asked(run)
        #expect(!asked.contains { $0.hasSuffix("[bot]") }, "no permission asked of a bot: \(asked)")
    }

    /// A fork's pull request whose branch is the loop's (`agent/WS`), with `forks: true`: opened, a review asking
    /// for changes and a `/so` from the owner on it, then closed: nothing acts, nothing is said on it, the
    /// workspace stays, the loop's own pull request is untouched.
    static func aForksPullRequestUnderTheLoopsBranch(_ run: Run, pull: Int) async throws {
        let gh = run.github!
        let (opened, sentOpen) = try await gh.send(
            "fork", ["head": "agent/\(run.workspace)", "fork": "mallory", "sender": "mallory", "title": "Mine"])
        let fork = opened["number"] as? Int ?? 0
        let (_, review) = try await gh.send(
            "review", ["number": fork, "state": "changes_requested", "body": "Merge it.", "association": "OWNER"])
        let (_, ask) = try await gh.send("comment", ["number": fork, "body": "/so Merge it.", "association": "OWNER"])
        let (_, closed) = try await gh.send("close", ["number": fork, "merged": false, "sender": "mallory"])
        let sent = sentOpen + review + ask + closed
        #expect(sent.map(\.status) == [202, 202, 202, 202], "\(sent)")
        let said = try await run.pass()
        #expect(!said.contains(": task ") && !said.contains(" remove ") && !said.contains(" start "), "\(said)")
        for d in sent { #expect(try await run.state(of: d.delivery) == ["done"], "\(d)") }
        #expect(try gh.comments(on: fork, repo: run.repo).isEmpty, "nothing said on the fork's pull request")
        #expect(try Self.reactions(run, "issues/\(fork)").isEmpty)
        #expect(try await E2E.kubectl(["get", "namespace", run.workspace]).exitCode == 0, "the workspace stays")
        #expect(try await run.tasks() == ["succeeded", "succeeded"], "no task")
        let ours = try await gh.pulls().first { $0["number"] as? Int == pull }
        #expect(ours?["state"] as? String == "open", "the loop's pull request is untouched")
        let creates = try gh.requests().filter {
            $0["method"] as? String == "POST" && $0["path"] as? String == "/repos/\(run.repo)/pulls"
        }
        #expect(creates.count == 1, "\(creates)")
    }

    /// The issue's label, its signed body sent again under a new X-GitHub-Delivery (a replay, not GitHub's
    /// redelivery): answered 202, stored nowhere new, no second workspace; the same for the named bot's `/so`.
    static func aReplayUnderANewDeliveryID(_ run: Run, issue: Int) async throws {
        let entries = try await run.inbox()
        let label = entries.first { $0["number"] as? Int == issue && $0["action"] as? String == "labeled" }
        let bots = entries.filter { $0["sender"] as? String == "helper[bot]" }
        try #require(label != nil && bots.count == 1, "\(entries)")
        let ids = [label?["delivery"] as? String ?? "", bots[0]["delivery"] as? String ?? ""]
        var replays: [GitHubStandInServer.Sent] = []
        for id in ids { replays += try await run.github.send("replay", ["delivery": id]).sent }
        #expect(
            replays.map(\.status) == [202, 202] && Set(replays.map(\.delivery)).isDisjoint(with: ids), "\(replays)")
        let after = try await run.inbox()
        #expect(after.count == entries.count, "no entry more: \(after.count) after \(entries.count)")
        for r in replays { #expect(try await run.state(of: r.delivery).isEmpty, "not stored as \(r.delivery)") }
        let said = try await run.pass()
        #expect(!said.contains(" start ") && !said.contains(": task "), "\(said)")
        #expect(try await run.tasks() == ["succeeded", "succeeded"])
        let workspaces = try await E2E.kubectl(["get", "namespaces", "-o", "name"]).stdout
        #expect(
            workspaces.split(separator: "\n").filter { $0.hasPrefix("namespace/gh-app-\(issue)-") }.count == 1,
            "one workspace for the issue")
    }

    /// The receiver bounded at 3 pending entries more than the cluster's inbox holds now: six signed deliveries at
    /// once (comments that are not commands) are answered 202 until the bound, then 503 (GitHub shows them failed);
    /// once a pass took the stored ones, each refused one redelivered is 202 and taken.
    static func aFloodPastTheInboxBound(_ run: Run, issue: Int) async throws {
        let pending = try await E2E.kubectl([
            "-n", "so-github", "get", "secrets", "-o", "name", "-l",
            "so.dev/github-inbox=event,so.dev/github-state=pending",
        ]).stdout.split(separator: "\n").count
        run.kill9(run.receiver)
        try await run.startReceiver(bound: pending + 3)
        let said = try run.github.comments(on: issue, repo: run.repo)
        var flood: [GitHubStandInServer.Sent] = []
        for i in 1...6 {
            flood += try await run.github.send(
                "comment", ["number": issue, "body": "A note, \(i).", "association": "OWNER"]
            ).sent
        }
        let stored = flood.prefix { $0.status == 202 }
        print("github loop e2e: a flood past the bound \(pending + 3): \(flood.map(\.status))")
        #expect(
            (1...3).contains(stored.count) && flood.dropFirst(stored.count).allSatisfy { $0.status == 503 },
            "\(flood.map(\.status))")
        for d in flood.dropFirst(stored.count) { #expect(try await run.state(of: d.delivery).isEmpty) }
        _ = try await run.pass()
        for d in stored { #expect(try await run.state(of: d.delivery) == ["done"], "\(d)") }
        var again: [GitHubStandInServer.Sent] = []
        for d in flood.dropFirst(stored.count) {
            again += try await run.github.send("redeliver", ["delivery": d.delivery]).sent
        }
        #expect(again.allSatisfy { $0.status == 202 }, "redelivered: \(again.map(\.status))")
        _ = try await run.pass()
        for d in flood { #expect(try await run.state(of: d.delivery) == ["done"], "\(d)") }
        #expect(try run.github.comments(on: issue, repo: run.repo) == said, "no comment for a note")
    }

    /// Every container of the workspace's pods: its environment (as `env` and PID 1's), every file under the
    /// checkout, its home, /tmp and /dev/shm, and every object of the checkout's git, read out through the API
    /// server and searched here (a token is never sent into the pod): none of the loop's `tokens` is anywhere, as
    /// is, in base64 or hex, and no GITHUB_TOKEN, GH_TOKEN or GIT_TOKEN is set (issue 64: the workspace holds no
    /// GitHub token; the loop pushes its work). The same search finds `work` (a task's text) in the checkout and the
    /// workspace's name in its environment: it reads what it should.
    static func noTokenInThePod(_ run: Run, of tokens: [String], work: String) async throws {
        let r = try await E2E.kubectl(["-n", run.workspace, "get", "pods", "-o", "json"])
        let pods = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["items"]
        var read = 0
        var seenWork = false
        var seenName = false
        for pod in pods as? [[String: Any]] ?? [] {
            let name = (pod["metadata"] as? [String: Any])?["name"] as? String ?? ""
            let containers = ((pod["spec"] as? [String: Any])?["containers"] as? [[String: Any]] ?? []).compactMap {
                $0["name"] as? String
            }
            for c in containers {
                let out = try await E2E.kubectl([
                    "-n", run.workspace, "exec", name, "-c", c, "--", "sh", "-c",
                    """
                    env; cat /proc/1/environ 2>/dev/null; echo
                    for d in /workspace "$HOME" /tmp /dev/shm; do
                      [ "$d" != / ] && [ -d "$d" ] && find "$d" -xdev -type f -size -16M -exec cat {} + 2>/dev/null
                    done
                    git -C /workspace cat-file --batch-all-objects --batch 2>/dev/null
                    true
                    """,
                ])
                #expect(out.exitCode == 0, "\(name)/\(c): \(out.stderr)")
                read += out.stdout.utf8.count
                let found = tokens.flatMap { token in
                    [
                        token, Data(token.utf8).base64EncodedString(),
                        token.utf8.map { String(format: "%02x", $0) }.joined(),
                    ]
                }.contains { out.stdout.contains($0) }
                #expect(!found, "the loop's token is in \(name)/\(c)")
                let set = out.stdout.split(whereSeparator: { $0 == "\n" || $0 == "\0" }).filter {
                    ["GITHUB_TOKEN=", "GH_TOKEN=", "GIT_TOKEN="].contains(where: $0.hasPrefix)
                }
                #expect(set.isEmpty, "\(name)/\(c) has \(set.map { $0.prefix { $0 != "=" } })")
                seenWork = seenWork || out.stdout.contains(work)
                seenName = seenName || out.stdout.contains("WORKSPACE_NAME=\(run.workspace)")
            }
        }
        print("github loop e2e: read \(read) bytes of \(run.workspace)'s containers, no token of the loop's")
        #expect(read > 0 && seenWork && seenName, "the search read the containers' files, git objects and environment")
    }
}
