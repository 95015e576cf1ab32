import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// GitHub's deliveries read into `GitHubEvent` (every event kind, hostile names, malformed bodies), and the inbox
/// they are written to in the cluster.
@Suite struct GitHubEventTests {
    static let delivery = "72d3162e-cc78-11e3-81ab-4c9367dc956a"

    static func json(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    static var repository: [String: Any] { ["full_name": "acme/app", "private": true, "id": 1] }
    static var sender: [String: Any] { ["login": "octocat", "id": 2] }

    static func issues(action: String = "labeled", number: Any = 52, repo: Any = repository) -> [String: Any] {
        [
            "action": action, "repository": repo, "sender": sender, "installation": ["id": 77],
            "label": ["name": "so", "color": "fff"],
            "issue": [
                "number": number, "title": "Add a webhook", "body": "Please\n$(rm -rf /)",
                "author_association": "OWNER", "user": ["login": "octocat"],
            ],
        ]
    }

    static func event(_ name: String, _ payload: [String: Any]) -> GitHubEvent? {
        if case .event(let e) = GitHubEvent.parse(event: name, delivery: delivery, body: json(payload)) { return e }
        return nil
    }

    static func refusal(_ name: String, _ body: Data, delivery: String? = delivery) -> GitHubEvent.Refusal? {
        if case .refused(let r) = GitHubEvent.parse(event: name, delivery: delivery, body: body) { return r }
        return nil
    }

    @Test func anIssueLabeled() throws {
        let e = try #require(Self.event("issues", Self.issues()))
        #expect(e.delivery == Self.delivery && e.event == "issues" && e.action == "labeled")
        #expect(e.repository == "acme/app" && e.number == 52 && !e.isPullRequest)
        #expect(e.title == "Add a webhook" && e.body == "Please\n$(rm -rf /)" && e.label == "so")
        #expect(e.authorAssociation == "OWNER" && e.sender == "octocat" && e.installationID == 77)
        #expect(e.commentID == nil && e.reviewState == nil && e.headRef == nil && !e.truncated)
    }

    @Test func aCommentOnAnIssueAndOnAPullRequest() throws {
        var p = Self.issues(action: "created")
        p["comment"] = ["id": 9001, "body": "/so fix it", "author_association": "COLLABORATOR"]
        let e = try #require(Self.event("issue_comment", p))
        #expect(e.commentID == 9001 && e.commentBody == "/so fix it" && e.authorAssociation == "COLLABORATOR")
        #expect(!e.isPullRequest)
        var issue = try #require(p["issue"] as? [String: Any])
        issue["pull_request"] = ["url": "https://api.github.com/repos/acme/app/pulls/52"]
        p["issue"] = issue
        #expect(try #require(Self.event("issue_comment", p)).isPullRequest)
        p["comment"] = ["id": 9001, "body": "/so fix it", "author_association": "SUPREME_LEADER"]
        #expect(try #require(Self.event("issue_comment", p)).authorAssociation == "NONE", "unknown: no standing")
        p["comment"] = nil
        #expect(Self.refusal("issue_comment", Self.json(p)) == .init(.missingField, "comment"))
    }

    static func pullRequest(action: String = "closed") -> [String: Any] {
        [
            "action": action, "repository": repository, "sender": sender,
            "pull_request": [
                "number": 7, "title": "so: fix", "body": NSNull(), "merged": true, "author_association": "MEMBER",
                "head": ["ref": "so/task-7", "repo": ["fork": false, "full_name": "acme/app"]],
            ],
        ]
    }

    @Test func aPullRequestClosedAndItsReviewsAndComments() throws {
        let e = try #require(Self.event("pull_request", Self.pullRequest()))
        #expect(e.number == 7 && e.isPullRequest && e.merged == true && e.headRef == "so/task-7")
        #expect(e.headRepoFork == false && e.body == nil && e.authorAssociation == "MEMBER")
        var review = Self.pullRequest(action: "submitted")
        review["review"] = [
            "id": 5, "state": "CHANGES_REQUESTED", "body": "no", "author_association": "OWNER",
        ]
        let r = try #require(Self.event("pull_request_review", review))
        #expect(r.reviewID == 5 && r.reviewState == "changes_requested" && r.reviewBody == "no")
        #expect(r.authorAssociation == "OWNER")
        var comment = Self.pullRequest(action: "created")
        comment["comment"] = ["id": 6, "body": "nit", "author_association": "CONTRIBUTOR"]
        let c = try #require(Self.event("pull_request_review_comment", comment))
        #expect(c.commentID == 6 && c.commentBody == "nit" && c.authorAssociation == "CONTRIBUTOR")
        // A deleted fork: GitHub sends the head's repo as null.
        var gone = Self.pullRequest()
        var pr = try #require(gone["pull_request"] as? [String: Any])
        pr["head"] = ["ref": "x", "repo": NSNull()]
        gone["pull_request"] = pr
        #expect(try #require(Self.event("pull_request", gone)).headRepoFork == nil)
    }

    /// A payload example of octokit/webhooks (`payload-examples/api.github.com/…`), trimmed of keys `so` does not
    /// read, its values as GitHub sent them.
    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: Path.join(Path.dirname(#filePath), "Fixtures", name)))
    }

    @Test func githubsOwnReviewCommentAndReviewExamples() throws {
        let parsed = GitHubEvent.parse(
            event: "pull_request_review_comment", delivery: Self.delivery,
            body: try Self.fixture("pull_request_review_comment.created.json"))
        guard case .event(let c) = parsed else {
            Issue.record("the example was refused: \(parsed)")
            return
        }
        #expect(c.repository == "Codertocat/Hello-World" && c.number == 2 && c.isPullRequest && c.action == "created")
        #expect(c.commentID == 284_312_630 && c.commentReviewID == 237_895_671 && c.inReplyTo == nil)
        #expect(c.commentPath == "README.md" && c.commentLine == 265)
        #expect(c.commentBody == "Maybe you should use more emojji on this line.")
        #expect(c.authorAssociation == "OWNER" && c.sender == "Codertocat" && c.headRef == "changes")
        #expect(c.headRepoFork == false && c.installationID == 1)
        let review = GitHubEvent.parse(
            event: "pull_request_review", delivery: Self.delivery,
            body: try Self.fixture("pull_request_review.submitted.json"))
        guard case .event(let r) = review else {
            Issue.record("the example was refused: \(review)")
            return
        }
        #expect(r.reviewID == c.commentReviewID && r.reviewState == "commented" && r.reviewBody == nil)
        #expect(r.number == 2 && r.authorAssociation == "OWNER" && r.commentPath == nil)
        #expect(r.eventTime == 1_557_933_638, "its submitted_at, 2019-05-15T15:20:38Z")
    }

    @Test func aReviewCommentsFileLineAndThreadAreChecked() throws {
        func comment(_ edit: (inout [String: Any]) -> Void) -> [String: Any] {
            var c: [String: Any] = [
                "id": 6, "body": "nit", "author_association": "MEMBER", "path": "Sources/App/main.swift",
                "line": 12, "original_line": 10, "pull_request_review_id": 5,
            ]
            edit(&c)
            var p = Self.pullRequest(action: "created")
            p["comment"] = c
            return p
        }
        let reply = try #require(Self.event("pull_request_review_comment", comment { $0["in_reply_to_id"] = 4 }))
        #expect(reply.inReplyTo == 4 && reply.commentLine == 12 && reply.commentPath == "Sources/App/main.swift")
        let outdated = try #require(Self.event("pull_request_review_comment", comment { $0["line"] = NSNull() }))
        #expect(outdated.commentLine == 10, "a comment on an outdated diff: its original line")
        let whole = comment {
            $0["line"] = NSNull()
            $0["original_line"] = nil
        }
        #expect(try #require(Self.event("pull_request_review_comment", whole)).commentLine == nil)
        for (bad, field) in [
            (comment { $0["path"] = "a\nb" }, "comment.path"), (comment { $0["path"] = "x\u{1b}[2J" }, "comment.path"),
            (comment { $0["path"] = "" }, "comment.path"),
            (comment { $0["path"] = String(repeating: "a/", count: 2049) }, "comment.path"),
            (comment { $0["line"] = 0 }, "comment.line"),
            (comment { $0["pull_request_review_id"] = -1 }, "comment.pull_request_review_id"),
            (comment { $0["in_reply_to_id"] = 0 }, "comment.in_reply_to_id"),
        ] {
            #expect(Self.refusal("pull_request_review_comment", Self.json(bad)) == .init(.invalidField, field))
        }
        #expect(
            Self.refusal("pull_request_review_comment", Self.json(comment { $0["line"] = "12" }))
                == .init(.invalidField, "comment.line"))
        // An issue's comment keeps none of it, and an event stored before these fields reads as before.
        var p = Self.issues(action: "created")
        p["comment"] = ["id": 9, "body": "x", "path": "README.md", "line": 3]
        let issueComment = try #require(Self.event("issue_comment", p))
        #expect(issueComment.commentPath == nil && issueComment.commentLine == nil)
        let old =
            #"{"delivery":"d","event":"issues","action":"labeled","repository":"a/b","number":1,"#
            + #""isPullRequest":false,"authorAssociation":"NONE","sender":"x","truncated":false}"#
        #expect(try JSONDecoder().decode(GitHubEvent.self, from: Data(old.utf8)).commentPath == nil)
    }

    @Test func pingAndUnknownEventsAreNotRead() {
        #expect(GitHubEvent.parse(event: "ping", delivery: nil, body: Data("not json".utf8)) == .ping)
        #expect(GitHubEvent.parse(event: "push", delivery: Self.delivery, body: Data()) == .unknown("push"))
        #expect(GitHubEvent.parse(event: "Issues", delivery: Self.delivery, body: Data()) == .unknown("?"))
        #expect(GitHubEvent.parse(event: "issues\n", delivery: Self.delivery, body: Data()) == .unknown("?"))
        #expect(Self.refusal("", Data()) == .init(.badEvent, "no X-GitHub-Event"))
        if case .refused(let r) = GitHubEvent.parse(event: nil, delivery: Self.delivery, body: Data()) {
            #expect(r.reason == .badEvent)
        } else {
            Issue.record("no event name is refused")
        }
    }

    @Test func malformedBodiesAndFieldsAreRefusedWithAReason() {
        for body in ["", "not json", "[1,2]", "\"x\"", "{", "null", "{\"action\":\"opened\"", "\u{feff}\u{0}"] {
            let r = Self.refusal("issues", Data(body.utf8))
            #expect(
                r?.reason == .malformed || r?.reason == .missingField,
                "\(body.debugDescription): \(String(describing: r))")
        }
        var p = Self.issues()
        p["repository"] = nil
        #expect(Self.refusal("issues", Self.json(p)) == .init(.missingField, "repository"))
        p["repository"] = ["name": "app"]
        #expect(Self.refusal("issues", Self.json(p)) == .init(.missingField, "repository.full_name"))
        #expect(Self.refusal("issues", Self.json(Self.issues(number: "52")))?.reason == .invalidField)
        #expect(Self.refusal("issues", Self.json(Self.issues(number: 0))) == .init(.invalidField, "issue.number"))
        #expect(Self.refusal("issues", Self.json(Self.issues(number: -3))) == .init(.invalidField, "issue.number"))
        // Foundation's decoder says a number that is not whole is not an Int without naming the field: malformed.
        let fraction = Self.refusal("issues", Self.json(Self.issues(number: 1.5)))?.reason
        #expect(fraction == .invalidField || fraction == .malformed)
        #expect(Self.refusal("issues", Self.json(Self.issues(action: "Labeled; rm"))) == .init(.invalidField, "action"))
        var noSender = Self.issues()
        noSender["sender"] = nil
        #expect(Self.refusal("issues", Self.json(noSender)) == .init(.missingField, "sender"))
        var badSender = Self.issues()
        badSender["sender"] = ["login": "octo cat"]
        #expect(Self.refusal("issues", Self.json(badSender)) == .init(.invalidField, "sender.login"))
        badSender["sender"] = ["login": "dependabot[bot]"]
        #expect(Self.event("issues", badSender)?.sender == "dependabot[bot]")
        var noIssue = Self.issues()
        noIssue["issue"] = nil
        #expect(Self.refusal("issues", Self.json(noIssue)) == .init(.missingField, "issue"))
        var badRef = Self.pullRequest()
        var pr = (badRef["pull_request"] as? [String: Any]) ?? [:]
        pr["head"] = ["ref": "a b"]
        badRef["pull_request"] = pr
        #expect(Self.refusal("pull_request", Self.json(badRef)) == .init(.invalidField, "pull_request.head.ref"))
    }

    @Test(arguments: [
        "acme", "acme/app/x", "/app", "acme/", "ac me/app", "acme/ap p", "acme/..", "acme/.", "acme/app\n",
        "../../etc/passwd", "acme/app;rm", String(repeating: "a", count: 40) + "/app",
        "acme/" + String(repeating: "a", count: 101), "acmé/app", "acme\\app",
    ])
    func hostileRepositoryNamesAreRefused(name: String) {
        #expect(!GitHubEvent.isRepositoryName(name))
        #expect(
            Self.refusal("issues", Self.json(Self.issues(repo: ["full_name": name])))
                == .init(.invalidField, "repository.full_name"))
    }

    @Test func repositoryNamesGitHubAllows() {
        for name in ["acme/app", "a-b/c.d_e", "Acme/App", "a/" + String(repeating: "x", count: 100), "a/.github"] {
            #expect(GitHubEvent.isRepositoryName(name), "\(name)")
        }
    }

    @Test func deliveryIdsAreChecked() {
        for bad in [nil, "", "../x", "a b", "a/b", "a.b", String(repeating: "a", count: 65), "é", "a\nb"] {
            #expect(Self.refusal("issues", Self.json(Self.issues()), delivery: bad)?.reason == .badDelivery)
        }
        #expect(GitHubEvent.isDeliveryID("72D3162E-cc78-11e3"))
    }

    @Test func longTextsAreCutAtACharactersEdge() throws {
        var p = Self.issues()
        p["issue"] = [
            "number": 1, "title": String(repeating: "é", count: 2000), "body": String(repeating: "🦀", count: 20_000),
        ]
        let e = try #require(Self.event("issues", p))
        #expect(e.truncated)
        #expect(e.title?.utf8.count == 1024 && e.title?.allSatisfy({ $0 == "é" }) == true)
        #expect((e.body?.utf8.count ?? 0) <= GitHubEvent.bodyBytes && e.body?.allSatisfy({ $0 == "🦀" }) == true)
        #expect(e.authorAssociation == "NONE", "no association said: none")
    }

    @Test func parsingIsDeterministicAndTheNormalizedEventRoundTrips() throws {
        let body = Self.json(Self.pullRequest())
        let a = GitHubEvent.parse(event: "pull_request", delivery: Self.delivery, body: body)
        #expect(a == GitHubEvent.parse(event: "pull_request", delivery: Self.delivery, body: body))
        let e = try #require(Self.event("pull_request", Self.pullRequest()))
        let written = JSONWriter.encode(e, .compact)
        #expect(try JSONDecoder().decode(GitHubEvent.self, from: Data(written.utf8)) == e)
    }

    // MARK: the inbox

    static func inbox() throws -> (GitHubInbox, FakeCluster) {
        let c = FakeCluster()
        return (GitHubInbox(client: c), c)
    }

    @Test func theFirstDeliveryMakesTheNamespaceAndARedeliveryChangesNothing() async throws {
        let (inbox, c) = try Self.inbox()
        let e = try #require(Self.event("issues", Self.issues()))
        let at = Date(timeIntervalSince1970: 1_795_000_000.25)
        #expect(try await inbox.record(e, at: at))
        let name = "so.github.\(Self.delivery)"
        #expect(
            c.calls == [
                "create Secret so-github/\(name)", "create Namespace so-github", "create Secret so-github/\(name)",
            ])
        let secret = try #require(c.object("Secret", name, namespace: "so-github"))
        #expect(secret["type"]?.string == "so.dev/github-event.v1")
        #expect(secret.labels["so.dev/github-repo"] == "acme_app" && secret.labels["so.dev/github-number"] == "52")
        #expect(secret.labels["so.dev/github-state"] == "pending" && secret.labels["so.dev/github-event"] == "issues")
        #expect(secret.annotations["so.dev/received-at"] == "2026-11-18T11:06:40.250000Z")
        #expect(try await !inbox.record(e, at: at.addingTimeInterval(60)), "a redelivery")
        #expect(c.calls.count == 4)
        let entries = try await inbox.list()
        #expect(entries.count == 1 && entries.first?.event == e && entries.first?.state == "pending")
        #expect(abs((entries.first?.receivedAt ?? .distantPast).timeIntervalSince(at)) < 0.001)
    }

    @Test func entriesListInTheOrderReceivedAndAreMarkedTakenOnce() async throws {
        let (inbox, _) = try Self.inbox()
        let base = Date(timeIntervalSince1970: 1_795_000_000)
        for (i, id) in ["ffff-1", "0000-2", "8888-3"].enumerated() {
            var e = try #require(Self.event("issues", Self.issues()))
            e.delivery = id
            try await inbox.record(e, at: base.addingTimeInterval(Double(i)))
        }
        let all = try await inbox.list()
        #expect(all.map(\.event.delivery) == ["ffff-1", "0000-2", "8888-3"])
        #expect(try await inbox.mark(all[0], state: "taken"))
        #expect(try await !inbox.mark(all[0], state: "taken"), "read before the change: refused")
        #expect(try await inbox.list(state: "pending").map(\.event.delivery) == ["0000-2", "8888-3"])
        #expect(try await inbox.list(state: "taken").map(\.event.delivery) == ["ffff-1"])
    }

    @Test func aMarkKeepsItsTimeAndWhoTookItAndADeleteIsAtTheVersionRead() async throws {
        let (inbox, _) = try Self.inbox()
        let at = Date(timeIntervalSince1970: 1_795_000_000.5)
        let e = try #require(Self.event("issues", Self.issues()))
        try await inbox.record(e, at: at)
        let read = try #require(try await inbox.list().first)
        #expect(read.markedAt == nil && read.takenBy == nil)
        let taken = try #require(try await inbox.marked(read, state: "taken", at: at, by: "host/12/ab"))
        let listed = try #require(try await inbox.list(state: "taken").first)
        #expect(listed.markedAt == at && listed.takenBy == "host/12/ab" && taken.takenBy == "host/12/ab")
        let done = try #require(try await inbox.marked(taken, state: "done", at: at.addingTimeInterval(5)))
        let ended = try #require(try await inbox.list(state: "done").first)
        #expect(ended.takenBy == nil && ended.markedAt == at.addingTimeInterval(5))
        #expect(try await !inbox.delete(taken), "read before the last mark: kept")
        #expect(try await inbox.delete(done))
        #expect(try await inbox.list().isEmpty)
    }

    @Test func repositoryLabelValues() {
        #expect(GitHubInbox.repoLabelValue("Acme/App") == "acme_app")
        let long = GitHubInbox.repoLabelValue("acme/" + String(repeating: "x", count: 80))
        #expect(long.hasPrefix("sha256-") && long.count == 47)
        #expect(GitHubInbox.repoLabelValue("acme/app.").hasPrefix("sha256-"), "a label ends with a letter or digit")
    }
}
