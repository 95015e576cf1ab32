import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoActions
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDashboardServer
@testable import SoWorkspace

/// `POST /github/webhook` over the fake cluster: what each delivery gets, and what it writes (one Secret for a good
/// one, however often delivered; nothing for anything refused).
@Suite struct GitHubWebhookRouteTests {
    static let secret = "It's a Secret to Everybody, twice"
    static let delivery = "72d3162e-cc78-11e3-81ab-4c9367dc956a"

    struct Setup {
        var app: Application<RouterResponder<DashboardContext>>
        var cluster: FakeCluster
        var lines: Box<[String]>
        var feed: DashboardFeed
    }

    func setup(
        maxBody: Int = GitHubWebhook.maximumBody, inboxBound: Int = GitHubWebhook.defaultInboxBound,
        webhook: Bool = true,
        github: GitHubSetup? = GitHubSetup(receiving: ["Acme/App"], budget: nil)
    ) async throws -> Setup {
        let c = FakeCluster()
        let ctx = DashboardFixture.context(c)
        let feed = DashboardFeed(ctx: ctx, client: c, kubectlFlags: [], clusterName: "kind:so", github: github != nil)
        let lines = Box<[String]>([])
        let access = DashboardAccess(token: String(repeating: "ab", count: 32), csrf: "CSRF-TOKEN", port: 7878)
        let hook = GitHubWebhook(
            secret: Self.secret, repositories: ["Acme/App"], inbox: GitHubInbox(client: c), maxBody: maxBody,
            inboxBound: inboxBound, now: { DashboardFixture.now }, log: { line in lines.value.append(line) })
        let server = DashboardServer(
            feed: feed, access: access, actions: nil, hostName: "testhost", webhook: webhook ? hook : nil,
            github: github)
        return Setup(app: Application(router: server.router()), cluster: c, lines: lines, feed: feed)
    }

    static func payload(repo: String = "acme/app") -> String {
        """
        {"action":"labeled","repository":{"full_name":"\(repo)"},"sender":{"login":"octocat"},\
        "label":{"name":"so"},"issue":{"number":52,"title":"t","body":"b","author_association":"OWNER"}}
        """
    }

    static func headers(
        _ body: String, event: String = "issues", delivery: String = delivery, secret: String = secret
    ) -> HTTPFields {
        [
            .contentType: "application/json", GitHubWebhook.eventHeader: event, GitHubWebhook.deliveryHeader: delivery,
            GitHubWebhook.signatureHeader: "sha256="
                + HMAC.sha256Hex(key: Array(secret.utf8), message: Array(body.utf8)),
        ]
    }

    struct Answer: Equatable {
        var status: HTTPResponse.Status
        var text: String
        var pair: (HTTPResponse.Status, String) { (status, text) }
    }

    static func post(
        _ client: some TestClientProtocol, _ body: String, headers: HTTPFields
    ) async throws -> Answer {
        try await client.execute(
            uri: GitHubWebhook.path, method: .post, headers: headers, body: ByteBuffer(string: body)
        ) { r in
            #expect(r.headers[.contentSecurityPolicy] != nil, "under the hardening middleware")
            return Answer(status: r.status, text: String(buffer: r.body))
        }
    }

    func secrets(_ c: FakeCluster) -> [String] { c.calls.filter { $0.hasPrefix("create Secret") } }

    @Test func aSignedDeliveryIsStoredOnceHoweverOftenItComes() async throws {
        let s = try await setup()
        let body = Self.payload()
        try await s.app.test(.router) { client async throws in
            let (status, text) = try await Self.post(client, body, headers: Self.headers(body)).pair
            #expect(status == .accepted && text == "stored\n")
            let (again, text2) = try await Self.post(client, body, headers: Self.headers(body)).pair
            #expect(again == .accepted && text2 == "already stored\n")
        }
        let stored = try await GitHubInbox(client: s.cluster).list()
        #expect(stored.count == 1 && stored.first?.event.delivery == Self.delivery)
        #expect(stored.first?.event.repository == "acme/app" && stored.first?.event.number == 52)
        #expect(
            s.lines.value == [
                "github: delivery \(Self.delivery): issues labeled acme/app#52: stored",
                "github: delivery \(Self.delivery): issues labeled acme/app#52: already stored (a redelivery, or the same body again)",
            ])
    }

    @Test func aSignedBodySentAgainUnderANewDeliveryIdIsNotANewEntry() async throws {
        let s = try await setup()
        let body = Self.payload()
        try await s.app.test(.router) { client async throws in
            #expect(try await Self.post(client, body, headers: Self.headers(body)).status == .accepted)
            let replay = Self.headers(body, delivery: "a-new-id-for-the-same-body")
            let (status, text) = try await Self.post(client, body, headers: replay).pair
            #expect(status == .accepted && text == "already stored\n")
        }
        let stored = try await GitHubInbox(client: s.cluster).list()
        #expect(stored.map(\.event.delivery) == [Self.delivery], "the first delivery's entry, alone")
        #expect(stored.map(\.secretName) == [GitHubInbox.bodyName(SHA256.hex(Array(body.utf8)))])
    }

    @Test func pastItsBoundTheInboxTakesNoNewDeliveryButStillKnowsItsOwn() async throws {
        let s = try await setup(inboxBound: 2)
        @Sendable func numbered(_ n: Int) -> String { Self.payload().replacingOccurrences(of: "52", with: "\(n)") }
        try await s.app.test(.router) { client async throws in
            for n in 1...2 {
                let b = numbered(n)
                #expect(try await Self.post(client, b, headers: Self.headers(b, delivery: "d\(n)")).status == .accepted)
            }
            let third = numbered(3)
            try await client.execute(
                uri: GitHubWebhook.path, method: .post, headers: Self.headers(third, delivery: "d3"),
                body: ByteBuffer(string: third)
            ) { r in
                #expect(r.status == .serviceUnavailable && r.headers[HeaderNames.retryAfter] == "60")
                #expect(String(buffer: r.body) == "the inbox is full (2 pending deliveries); deliver again later\n")
            }
            let first = numbered(1)
            #expect(
                try await Self.post(client, first, headers: Self.headers(first, delivery: "d1")).pair
                    == (.accepted, "already stored\n"), "a redelivery while full is no 503")
            // A loop took one: room for the next.
            let inbox = GitHubInbox(client: s.cluster)
            let d1 = try #require(try await inbox.list().first { $0.event.delivery == "d1" })
            #expect(try await inbox.mark(d1, state: "taken"))
            #expect(
                try await Self.post(client, third, headers: Self.headers(third, delivery: "d3")).status == .accepted)
        }
        #expect(try await GitHubInbox(client: s.cluster).list().map(\.event.delivery).sorted() == ["d1", "d2", "d3"])
        #expect(s.lines.value.contains("github: delivery d3: not stored (503): the inbox holds 2 pending deliveries"))
    }

    @Test func aFloodIsCountedOneDeliveryAtATime() async throws {
        let s = try await setup(inboxBound: 5)
        let bodies = (1...12).map { Self.payload().replacingOccurrences(of: "52", with: "\($0)") }
        try await s.app.test(.router) { client async throws in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (i, b) in bodies.enumerated() {
                    group.addTask { try await Self.post(client, b, headers: Self.headers(b, delivery: "f\(i)")).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .accepted }.count == 5)
            #expect(statuses.filter { $0 == .serviceUnavailable }.count == 7)
        }
        #expect(try await GitHubInbox(client: s.cluster).list(state: "pending").count == 5, "never past the bound")
    }

    @Test func aWrongOrMissingSignatureIsA401AndWritesNothing() async throws {
        let s = try await setup()
        let body = Self.payload()
        try await s.app.test(.router) { client async throws in
            var wrong = Self.headers(body, secret: "another secret of twenty+ chars")
            #expect(try await Self.post(client, body, headers: wrong).status == .unauthorized)
            wrong[GitHubWebhook.signatureHeader] = nil
            #expect(try await Self.post(client, body, headers: wrong).status == .unauthorized)
            // Signed, then changed on the way.
            let signed = Self.headers(body)
            #expect(try await Self.post(client, body + " ", headers: signed).status == .unauthorized)
        }
        #expect(s.cluster.calls.isEmpty)
        #expect(s.lines.value.count == 3)
        #expect(s.lines.value.allSatisfy { $0.contains("refused (401): no valid X-Hub-Signature-256") })
        for line in s.lines.value {
            #expect(!line.contains(Self.secret) && !line.contains("sha256=") && !line.contains("octocat"))
        }
    }

    @Test func unknownEventsAreA204AndAPingA200() async throws {
        let s = try await setup()
        try await s.app.test(.router) { client async throws in
            let push = "{\"ref\":\"refs/heads/main\"}"
            #expect(try await Self.post(client, push, headers: Self.headers(push, event: "push")).status == .noContent)
            let ping = "{\"zen\":\"Design for failure.\",\"hook_id\":1}"
            #expect(
                try await Self.post(client, ping, headers: Self.headers(ping, event: "ping"))
                    == Answer(status: .ok, text: "pong\n"))
        }
        #expect(s.cluster.calls.isEmpty)
    }

    @Test func malformedJSONAndBadDeliveryIdsAreA400() async throws {
        let s = try await setup()
        try await s.app.test(.router) { client async throws in
            let bad = "{\"action\":\"labeled\""
            let (status, text) = try await Self.post(client, bad, headers: Self.headers(bad)).pair
            #expect(status == .badRequest && text.hasPrefix("malformed"), "\(text)")
            let body = Self.payload()
            #expect(
                try await Self.post(client, body, headers: Self.headers(body, delivery: "../x")).status == .badRequest)
            let noRepo = "{\"action\":\"labeled\",\"sender\":{\"login\":\"o\"},\"issue\":{\"number\":1}}"
            let (s3, t3) = try await Self.post(client, noRepo, headers: Self.headers(noRepo)).pair
            #expect(s3 == .badRequest && t3 == "missing field: repository\n")
        }
        #expect(s.cluster.calls.isEmpty)
        #expect(
            s.lines.value.first
                == "github: delivery \(Self.delivery): refused (400): malformed: the body is not a JSON object")
        #expect(
            s.lines.value.dropFirst().first?.hasPrefix("github: delivery ?: refused (400): bad delivery id") == true)
    }

    @Test func aPayloadOverTheBoundIsA400() async throws {
        #expect(GitHubWebhook.maximumBody == 25 * 1024 * 1024, "GitHub's bound")
        let s = try await setup(maxBody: 1000)
        try await s.app.test(.router) { client async throws in
            let big = Self.payload().replacingOccurrences(
                of: "\"b\"", with: "\"\(String(repeating: "b", count: 1000))\"")
            let (status, text) = try await Self.post(client, big, headers: Self.headers(big)).pair
            #expect(status == .badRequest && text == "payload over 1000 bytes\n")
            let fits = Self.payload()
            #expect(fits.utf8.count <= 1000)
            #expect(try await Self.post(client, fits, headers: Self.headers(fits)).status == .accepted)
        }
        #expect(secrets(s.cluster).count == 2, "the namespace's first write: tried, made, written")
    }

    /// A large delivery (1 MiB, past what the inbox keeps of a text) is hashed, read, cut and stored. The time is
    /// printed, not held to GitHub's 10 s: a debug build run beside every other suite waits minutes for a thread (a
    /// 4 MiB delivery took 190-210 s there, 4.5 s alone; a release build hashes 25 MiB in 0.7 s and reads it in 0.1 s).
    @Test func aLargeDeliveryIsHashedReadCutAndStored() async throws {
        let s = try await setup()
        let text = String(repeating: "0123456789abcdef", count: 1024 * 1024 / 16)
        let body = Self.payload().replacingOccurrences(of: "\"b\"", with: "\"\(text)\"")
        let headers = Self.headers(body)
        try await s.app.test(.router) { client async throws in
            let started = Date()
            let answer = try await Self.post(client, body, headers: headers)
            let seconds = Date().timeIntervalSince(started)
            print(
                "github webhook: a delivery of \(body.utf8.count) bytes answered \(answer.status.code) in \(seconds) s")
            #expect(answer.status == .accepted)
        }
        let stored = try #require(try await GitHubInbox(client: s.cluster).list().first)
        #expect(stored.event.truncated && stored.event.body?.utf8.count == GitHubEvent.bodyBytes)
    }

    @Test func aPayloadOverTwentyFiveMegabytesIsA400() async throws {
        let s = try await setup()
        try await s.app.test(.router) { client async throws in
            // Refused before its signature is checked: any will do (hashing 25 MB in a debug build takes seconds).
            let big = String(repeating: " ", count: GitHubWebhook.maximumBody + 1)
            var headers = Self.headers("{}")
            headers[.contentLength] = nil
            let (status, _) = try await Self.post(client, big, headers: headers).pair
            #expect(status == .badRequest)
        }
        #expect(s.cluster.calls.isEmpty)
    }

    @Test func anotherRepositoryIsA403() async throws {
        let s = try await setup()
        try await s.app.test(.router) { client async throws in
            let body = Self.payload(repo: "evil/app")
            let (status, text) = try await Self.post(client, body, headers: Self.headers(body)).pair
            #expect(status == .forbidden && text == "repository evil/app is not one this receiver takes\n")
            let upper = Self.payload(repo: "ACME/app")
            #expect(
                try await Self.post(client, upper, headers: Self.headers(upper)).status == .accepted, "case-insensitive"
            )
        }
    }

    @Test func anInboxThatCannotBeWrittenIsA503AndTheNextDeliveryStoresIt() async throws {
        let s = try await setup()
        s.cluster.failures["create Secret"] = SoError("cannot create Secret: connection refused", hint: "h")
        let body = Self.payload()
        try await s.app.test(.router) { client async throws in
            try await client.execute(
                uri: GitHubWebhook.path, method: .post, headers: Self.headers(body), body: ByteBuffer(string: body)
            ) { r in
                #expect(r.status == .serviceUnavailable && r.headers[HeaderNames.retryAfter] == "30")
            }
            s.cluster.failures = [:]
            #expect(try await Self.post(client, body, headers: Self.headers(body)).status == .accepted)
        }
        #expect(try await GitHubInbox(client: s.cluster).list().count == 1)
        #expect(s.lines.value.first?.hasPrefix("github: delivery \(Self.delivery): not stored (503): ") == true)
    }

    @Test func withoutAWebhookThePathIsA403LikeAnyOther() async throws {
        let s = try await setup(webhook: false)
        try await s.app.test(.router) { client async throws in
            let body = Self.payload()
            #expect(
                try await Self.post(client, body, headers: Self.headers(body))
                    == Answer(status: .forbidden, text: "forbidden\n"))
        }
        #expect(s.cluster.calls.isEmpty)
    }

    @Test func theWebhookOpensNoOtherPathWithoutASession() async throws {
        let s = try await setup()
        try await s.app.test(.router) { client async throws in
            for uri in ["/", "/github/webhook/x", "/github", "/actions"] {
                try await client.execute(uri: uri, method: .post) { #expect($0.status == .forbidden, "\(uri)") }
            }
            try await client.execute(uri: GitHubWebhook.path, method: .get) { r in
                #expect(r.status != .ok, "GET is not a delivery")
            }
        }
    }

    /// Each outcome counted once, in the server's memory, for the GitHub page: what the receiver answered since it
    /// started.
    @Test func everyOutcomeIsCountedForThePage() async throws {
        let s = try await setup()
        let body = Self.payload()
        let before = await s.feed.snapshot.version
        try await s.app.test(.router) { client async throws in
            #expect(try await Self.post(client, body, headers: Self.headers(body)).status == .accepted)
            #expect(try await Self.post(client, body, headers: Self.headers(body)).status == .accepted)
            let wrong = Self.headers(body, secret: "another secret of twenty+ chars")
            #expect(try await Self.post(client, body, headers: wrong).status == .unauthorized)
            let other = Self.payload(repo: "evil/app")
            #expect(try await Self.post(client, other, headers: Self.headers(other)).status == .forbidden)
            let bad = "{\"action\":"
            #expect(try await Self.post(client, bad, headers: Self.headers(bad)).status == .badRequest)
            #expect(try await Self.post(client, bad, headers: Self.headers(bad)).status == .badRequest)
            let push = "{\"ref\":\"refs/heads/main\"}"
            #expect(try await Self.post(client, push, headers: Self.headers(push, event: "push")).status == .noContent)
            let ping = "{\"zen\":\"z\"}"
            #expect(try await Self.post(client, ping, headers: Self.headers(ping, event: "ping")).status == .ok)
            s.cluster.failures["create Secret"] = SoError("cannot create Secret: connection refused", hint: "h")
            let next = Self.payload().replacingOccurrences(of: "52", with: "53")
            let headers = Self.headers(next, delivery: "other-delivery")
            #expect(try await Self.post(client, next, headers: headers).status == .serviceUnavailable)
        }
        let snapshot = await s.feed.snapshot
        let r = snapshot.github.receiver
        #expect(r.since == DashboardFixture.now, "counted since the server started")
        #expect(
            r.counts == [
                .accepted: 1, .duplicate: 1, .refused(401): 1, .refused(403): 1, .refused(400): 2, .refused(204): 1,
                .ping: 1, .unstored: 1,
            ])
        #expect(snapshot.version == before + 9, "each answer is a new version: open pages draw it")
    }

    /// `/github` is a page like the others: behind the session, drawn from the feed, absent where not configured.
    @Test func theGitHubPageIsBehindTheSession() async throws {
        let s = try await setup()
        try await s.app.test(.router) { client async throws in
            try await client.execute(uri: "/github", method: .get) { r in
                #expect(r.status == .forbidden && String(buffer: r.body) == "forbidden\n")
            }
            let cookie = try await Self.signIn(client)
            let body = Self.payload()
            #expect(try await Self.post(client, body, headers: Self.headers(body)).status == .accepted)
            try await client.execute(uri: "/github", method: .get, headers: [.cookie: cookie]) { r in
                #expect(r.status == .ok && r.headers[.contentSecurityPolicy] != nil)
                let html = String(buffer: r.body)
                #expect(html.contains("<h1>GitHub loop</h1>") && html.contains("for Acme/App since"), "\(html)")
                #expect(html.contains(#"<div class="label">accepted</div><div class="value">1</div>"#))
            }
            try await client.execute(uri: "/github?fragment=1", method: .get, headers: [.cookie: cookie]) { r in
                #expect(String(buffer: r.body).hasPrefix("<p class=\"empty\">not read yet</p><section"))
            }
        }
        let none = try await setup(webhook: false, github: nil)
        try await none.app.test(.router) { client async throws in
            let cookie = try await Self.signIn(client)
            try await client.execute(uri: "/github", method: .get, headers: [.cookie: cookie]) { r in
                #expect(r.status == .notFound)
            }
            try await client.execute(uri: "/", method: .get, headers: [.cookie: cookie]) { r in
                #expect(r.status == .ok && !String(buffer: r.body).contains("/github"), "no link")
            }
        }
    }

    /// Signs in with the run's token; the session's cookie as the browser sends it back.
    static func signIn(_ client: some TestClientProtocol) async throws -> String {
        try await client.execute(
            uri: "/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: "token=\(String(repeating: "ab", count: 32))")
        ) { r in
            #expect(r.status == .seeOther)
            return String((r.headers[.setCookie] ?? "").prefix { $0 != ";" })
        }
    }

    @Test func theSecretIsRefusedWhenShortAndNeverShown() throws {
        #expect(throws: SoError.self) { try GitHubWebhook.configuredSecret("short\n", from: "f") }
        do {
            _ = try GitHubWebhook.configuredSecret("tooShortSecret", from: "f")
        } catch {
            #expect(!"\(error)".contains("tooShortSecret"))
        }
        #expect(try GitHubWebhook.configuredSecret(Self.secret + "\n", from: "f") == Self.secret)
        let hook = GitHubWebhook(
            secret: Self.secret, repositories: ["a/b"], inbox: GitHubInbox(client: FakeCluster()), log: { _ in })
        #expect(!"\(hook)".contains("Secret to Everybody") && !String(reflecting: hook).contains("Everybody"))
    }
}
