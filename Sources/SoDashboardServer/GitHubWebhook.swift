import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SoBasics
import SoDashboard
import SoGitHub
import SoWorkspace

/// `POST /github/webhook`: GitHub's deliveries, each checked (its size, its `X-Hub-Signature-256` under the
/// webhook's secret, its event, its JSON, its repository) and written to the cluster's inbox (`GitHubInbox`) before
/// a 202. No session: the signature is the sender's proof. Whatever is refused changes nothing and is said in one
/// log line (the delivery's id and why; never the secret, the signature or the body).
public struct GitHubWebhook: Sendable, CustomStringConvertible {
    public static let path = "/github/webhook"
    /// GitHub's bound on a delivery's payload (25 MB); a larger body is refused.
    public static let maximumBody = 25 * 1024 * 1024
    /// The shortest secret taken (GitHub advises a long random one: `openssl rand -hex 32`).
    public static let minimumSecretLength = 20
    /// The most pending deliveries the inbox holds (`--github-inbox-bound`): past it, 503.
    public static let defaultInboxBound = 1000

    let secret: [UInt8]
    /// The repositories deliveries are taken from, lowercased (GitHub's names are not case-sensitive).
    public let repositories: Set<String>
    public let inbox: GitHubInbox
    let maxBody: Int
    let gate: GitHubInboxGate
    let now: @Sendable () -> Date
    let log: @Sendable (String) -> Void

    public init(
        secret: String, repositories: [String], inbox: GitHubInbox, maxBody: Int = GitHubWebhook.maximumBody,
        inboxBound: Int = GitHubWebhook.defaultInboxBound, now: @escaping @Sendable () -> Date = { Date() },
        log: @escaping @Sendable (String) -> Void
    ) {
        gate = GitHubInboxGate(inbox: inbox, bound: inboxBound)
        self.secret = Array(secret.utf8)
        self.repositories = Set(repositories.map { $0.lowercased() })
        self.inbox = inbox
        self.maxBody = maxBody
        self.now = now
        self.log = log
    }

    /// Never the secret.
    public var description: String { "GitHubWebhook(repositories: \(repositories.sorted()))" }

    /// The secret as configured (a file's trailing newline dropped), refused without showing it when absent or short.
    public static func configuredSecret(_ value: String, from source: String) throws -> String {
        var s = value
        while s.hasSuffix("\n") || s.hasSuffix("\r") { s.removeLast() }
        guard s.count >= minimumSecretLength else {
            throw SoError(
                "the webhook secret in \(source) has \(s.count) characters: so dashboard needs at least "
                    + "\(minimumSecretLength)",
                hint: "make one with `openssl rand -hex 32` and give GitHub's webhook the same")
        }
        return s
    }

    static let deliveryHeader = HeaderNames.named("X-GitHub-Delivery")
    static let eventHeader = HeaderNames.named("X-GitHub-Event")
    static let signatureHeader = HeaderNames.named("X-Hub-Signature-256")

    /// The answer to a delivery, and its outcome as the page counts it (`DeliveryCounts`).
    func receive(_ request: Request) async -> (Response, DeliveryCounts.Outcome) {
        let given = request.headers[Self.deliveryHeader]
        let delivery = given.flatMap { GitHubEvent.isDeliveryID($0) ? $0 : nil } ?? "?"
        func refuse(_ status: HTTPResponse.Status, _ why: String) -> (Response, DeliveryCounts.Outcome) {
            log("github: delivery \(delivery): refused (\(status.code)): \(why)")
            return (DashboardServer.text("\(why)\n", status: status), .refused(status.code))
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBody {
            return refuse(.badRequest, "payload over \(maxBody) bytes")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maxBody)
        } catch {
            return refuse(.badRequest, "payload over \(maxBody) bytes")
        }
        let bytes = body.readableBytesView
        guard HMAC.validGitHubSignature(request.headers[Self.signatureHeader], body: bytes, secret: secret) else {
            return refuse(.unauthorized, "no valid X-Hub-Signature-256")
        }
        switch GitHubEvent.parse(
            event: request.headers[Self.eventHeader], delivery: given, body: body.withUnsafeReadableBytes { Data($0) })
        {
        case .ping:
            log("github: delivery \(delivery): ping")
            return (DashboardServer.text("pong\n"), .ping)
        case .unknown(let name):
            log("github: delivery \(delivery): event \(name) not handled: nothing stored")
            return (Response(status: .noContent), .refused(204))
        case .refused(let why):
            return refuse(.badRequest, "\(why)")
        case .event(let event):
            guard repositories.contains(event.repository.lowercased()) else {
                return refuse(.forbidden, "repository \(event.repository) is not one this receiver takes")
            }
            return await store(event, delivery: delivery, digest: SHA256.hex(bytes))
        }
    }

    /// A signed event of a repository this receiver takes, into the inbox: stored once per body (`digest` names
    /// the entry: the same signed body under a new delivery id is stored once), or a 503 that asks for it again.
    func store(_ event: GitHubEvent, delivery: String, digest: String) async -> (
        Response, DeliveryCounts.Outcome
    ) {
        do {
            let outcome = try await gate.store(event, at: now(), digest: digest)
            if case .full(let pending) = outcome {
                log("github: delivery \(delivery): not stored (503): the inbox holds \(pending) pending deliveries")
                var r = DashboardServer.text(
                    "the inbox is full (\(pending) pending deliveries); deliver again later\n",
                    status: .serviceUnavailable)
                r.headers[HeaderNames.retryAfter] = "60"
                return (r, .unstored)
            }
            let new = outcome == .stored
            log(
                "github: delivery \(delivery): \(event.event) \(event.action) \(event.repository)#\(event.number): "
                    + (new ? "stored" : "already stored (a redelivery, or the same body again)"))
            return (
                DashboardServer.text(new ? "stored\n" : "already stored\n", status: .accepted),
                new ? .accepted : .duplicate
            )
        } catch {
            log(
                "github: delivery \(delivery): not stored (503): "
                    + "\(error)".replacingOccurrences(of: "\n", with: " "))
            var r = DashboardServer.text(
                "the inbox could not be written; deliver again\n", status: .serviceUnavailable)
            r.headers[HeaderNames.retryAfter] = "30"
            return (r, .unstored)
        }
    }
}
